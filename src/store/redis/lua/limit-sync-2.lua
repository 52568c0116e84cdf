-- limit-sync: merge one replica's batch into a zone's cluster-wide buckets (limit-sync-store.ts).
-- KEYS[1] the zone's buckets hash (key → {e, l, s, t, r, w = {replica = {weight, at}}} JSON)
-- KEYS[2] the zone's touched zset (key scored by the last exchange that named it)
-- ARGV[1] rate (requests per second × 1000); ARGV[2] replica id; ARGV[3] sender's clock, epoch ms;
--   ARGV[4] share decay time constant, ms; ARGV[5] idle time after which a drained key is forgotten, ms;
--   ARGV[6] the level of a drained bucket (milli-requests);
--   then per key: ARGV[7+3i] key, ARGV[8+3i] requests charged, ARGV[9+3i] requests seen
-- Returns {excess, last, share, excess, last, share, ...} as strings, in the batch's order
local rate, replica, now, tau = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local idle, drained = tonumber(ARGV[5]), tonumber(ARGV[6])

local function decayed(value, at)
  if now > at then return value * math.exp(-(now - at) / tau) end
  return value
end

-- One HMGET, one HSET and one ZADD for the whole batch, whatever its size.
local names = {}
for i = 7, #ARGV, 3 do names[#names + 1] = ARGV[i] end
local reply = {}
if #names > 0 then
  local raws = redis.call('HMGET', KEYS[1], unpack(names))
  local fields, touched = {}, {}
  for j, key in ipairs(names) do
    local i = 4 + 3 * j
    local charged, seen = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
    local b
    -- A new bucket is drained: its first request is free, as nginx's first of a node.
    if raws[j] then b = cjson.decode(raws[j]) else b = {e = drained, l = now, s = 0, t = now, w = {}} end
    local leak = 0
    if now > b.l then
      leak = math.floor(rate * (now - b.l) / 1000)
      b.l = now
    end
    b.e = math.max(drained, b.e + 1000 * charged - leak)
    b.r = rate
    b.s = decayed(b.s, b.t) + seen
    if now > b.t then b.t = now end
    local mine = b.w[replica]
    local weight = seen
    local at = now
    if mine then
      weight = decayed(mine[1], mine[2]) + seen
      if mine[2] > at then at = mine[2] end
    end
    b.w[replica] = {weight, at}
    for other, v in pairs(b.w) do
      if other ~= replica and decayed(v[1], v[2]) < 0.001 then b.w[other] = nil end
    end
    local share = 1
    if b.s > 0 then share = math.min(1, weight / b.s) end
    fields[#fields + 1] = key
    fields[#fields + 1] = cjson.encode(b)
    touched[#touched + 1] = now
    touched[#touched + 1] = key
    reply[#reply + 1] = string.format('%.0f', b.e)
    reply[#reply + 1] = string.format('%.0f', b.l)
    reply[#reply + 1] = string.format('%.17g', share)
  end
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('ZADD', KEYS[2], unpack(touched))
end
-- Keys idle for `idle` ms whose bucket has drained are forgotten, a few at a time.
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
return reply
