-- limit-sync: merge one replica's batch into a zone's cluster-wide buckets (limit-sync-store.ts).
-- KEYS[1] the zone's buckets hash (key → {e, l, r, w = {replica = {weight, at}}} JSON; e, the level
--   at l, may be below a drained bucket's: how long ago it drained)
-- KEYS[2] the zone's touched zset (key scored by the last exchange that named it)
-- KEYS[3] the zone's senders hash (replica → "<incarnation> <last seq applied>")
-- KEYS[4] the zone's heard zset (replica scored by its last exchange)
-- KEYS[5] the registry's replicas-expiry hash (replica → the store's ms after which it is not live)
-- ARGV[1] rate (requests per second × 1000); ARGV[2] replica id; ARGV[3] incarnation; ARGV[4] seq;
--   ARGV[5] share decay time constant, ms; ARGV[6] idle time after which a drained key is forgotten, ms;
--   ARGV[7] the level of a drained bucket (milli-requests); ARGV[8] silence after which a live
--   replica's shares are held as they were, ms; ARGV[9] silence after which a sender is forgotten, ms;
--   then per key: ARGV[10+4i] key, ARGV[11+4i] requests charged, ARGV[12+4i] requests seen,
--   ARGV[13+4i] when the first of them came, on the store's clock as the replica reads it, ms (a
--   batch the store runs late, after a freeze, still counts from then)
-- Time is the store's own (TIME): buckets leak and liveness is judged on one clock, whatever the
-- replicas' clocks say. A batch at or below the sender's last applied seq (the same incarnation) is
-- a repeat — sent again after a timeout, or run late after a freeze — and adds nothing.
-- Returns {excess, share, excess, share, ...} as strings, in the batch's order
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local rate, replica, incarnation, seq = tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4])
local tau, idle, drained = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local lostAfter, forgetAfter = tonumber(ARGV[8]), tonumber(ARGV[9])

local applied = redis.call('HGET', KEYS[3], replica)
local repeated = false
if applied then
  local sep = string.find(applied, ' ', 1, true)
  repeated = string.sub(applied, 1, sep - 1) == incarnation and tonumber(string.sub(applied, sep + 1)) >= seq
end
if not repeated then redis.call('HSET', KEYS[3], replica, incarnation .. ' ' .. seq) end
redis.call('ZADD', KEYS[4], now, replica)

local function decayed(value, at, to)
  if to > at then return value * math.exp(-(to - at) / tau) end
  return value
end

-- How far another replica's weights decay: to now; but a replica still live that has not been heard
-- for `lostAfter` (cut off from the store) keeps them as they were then, so the others do not take
-- its part while it may still be admitting on it. Its heartbeat's lapse ends that.
local horizons = {}
local function horizon(other)
  local h = horizons[other]
  if h then return h end
  h = now
  local expiry = tonumber(redis.call('HGET', KEYS[5], other) or '0')
  if expiry > now then
    local heard = tonumber(redis.call('ZSCORE', KEYS[4], other) or '0')
    if heard + lostAfter < now then h = heard + lostAfter end
  end
  horizons[other] = h
  return h
end

-- One HMGET, one HSET and one ZADD for the whole batch, whatever its size.
local names = {}
for i = 10, #ARGV, 4 do names[#names + 1] = ARGV[i] end
local reply = {}
if #names > 0 then
  local raws = redis.call('HMGET', KEYS[1], unpack(names))
  local fields, touched = {}, {}
  for j, key in ipairs(names) do
    local i = 6 + 4 * j
    local charged, seen = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
    local age = math.max(0, now - tonumber(ARGV[i + 3]))
    if repeated then charged, seen = 0, 0 end
    local b
    -- A new bucket is drained (its first request is free, as nginx's first of a node).
    if raws[j] then b = cjson.decode(raws[j]) else b = {e = drained, l = now - age, w = {}} end
    -- GCRA: the level is kept below `drained` too (a theoretical arrival time in the past), and the
    -- charges count from when their first request came, not from when the batch arrived: a batch
    -- held back by a store that was frozen, away or cut off gets the leak of the time it waited.
    local level = b.e
    if now > b.l then level = level - math.floor(rate * (now - b.l) / 1000) end
    local since = drained - math.floor(rate * age / 1000)
    if since > level then level = since end
    b.e = level + 1000 * charged
    if now > b.l then b.l = now end
    b.r = rate
    b.s = nil
    b.t = nil
    local mine = b.w[replica]
    local weight = seen
    if mine then weight = decayed(mine[1], mine[2], now) + seen end
    b.w[replica] = {weight, now}
    local sum = weight
    for other, v in pairs(b.w) do
      if other ~= replica then
        local w = decayed(v[1], v[2], horizon(other))
        if w < 0.001 then b.w[other] = nil else sum = sum + w end
      end
    end
    local share = 1
    if sum > 0 then share = math.min(1, weight / sum) end
    fields[#fields + 1] = key
    fields[#fields + 1] = cjson.encode(b)
    touched[#touched + 1] = now
    touched[#touched + 1] = key
    reply[#reply + 1] = string.format('%.0f', math.max(drained, b.e))
    reply[#reply + 1] = string.format('%.17g', share)
  end
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('ZADD', KEYS[2], unpack(touched))
end
-- Keys idle for `idle` ms whose bucket has drained are forgotten, a few at a time; so are senders
-- silent for `forgetAfter` ms.
local idleKeys = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - idle, 'LIMIT', 0, 50)
if #idleKeys > 0 then
  local raws = redis.call('HMGET', KEYS[1], unpack(idleKeys))
  local gone = {}
  for j, key in ipairs(idleKeys) do
    local drainedNow = true
    if raws[j] then
      local b = cjson.decode(raws[j])
      drainedNow = b.e - (b.r or rate) * (now - b.l) / 1000 <= drained
    end
    if drainedNow then gone[#gone + 1] = key end
  end
  if #gone > 0 then
    redis.call('HDEL', KEYS[1], unpack(gone))
    redis.call('ZREM', KEYS[2], unpack(gone))
  end
end
local silent = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - forgetAfter, 'LIMIT', 0, 10)
if #silent > 0 then
  redis.call('HDEL', KEYS[3], unpack(silent))
  redis.call('ZREM', KEYS[4], unpack(silent))
end
return reply
