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

local reply = {}
for i = 7, #ARGV, 3 do
  local key, charged, seen = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  local raw = redis.call('HGET', KEYS[1], key)
  local b
  -- A new bucket is drained: its first request is free, as nginx's first of a node.
  if raw then b = cjson.decode(raw) else b = {e = drained, l = now, s = 0, t = now, w = {}} end
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
  redis.call('HSET', KEYS[1], key, cjson.encode(b))
  redis.call('ZADD', KEYS[2], now, key)
  table.insert(reply, string.format('%.0f', b.e))
  table.insert(reply, string.format('%.0f', b.l))
  table.insert(reply, string.format('%.17g', share))
end
-- Keys idle for `idle` ms whose bucket has drained are forgotten, a few at a time.
for _, key in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - idle, 'LIMIT', 0, 50)) do
  local raw = redis.call('HGET', KEYS[1], key)
  local gone = true
  if raw then
    local b = cjson.decode(raw)
    gone = b.e - (b.r or rate) * (now - b.l) / 1000 <= drained
  end
  if gone then
    redis.call('HDEL', KEYS[1], key)
    redis.call('ZREM', KEYS[2], key)
  end
end
return reply
