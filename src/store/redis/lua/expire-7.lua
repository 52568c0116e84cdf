-- expire: remove every key whose expireAtMs <= ARGV[4], one 'expire' change per zone (zones in
-- byte order). Atomic, so concurrent callers expire each key exactly once.
-- KEYS[1..7] see lib/commit.lua
-- ARGV[1..6] see lib/commit.lua (no audit note: expiry is not audited); ARGV[7] prefix of the zone
--   hashes (`kv:<zone>`, same hash tag)
-- Returns {'ok', last revision or 0, zone, {key, entry JSON, ...}, zone, {...}, ...}
local due = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', ARGV[4])
if #due == 0 then return {'ok', 0} end
local by_zone, zones = {}, {}
for _, m in ipairs(due) do
  local cut = string.find(m, '\0', 1, true)
  local zone, key = string.sub(m, 1, cut - 1), string.sub(m, cut + 1)
  if not by_zone[zone] then
    by_zone[zone] = {}
    table.insert(zones, zone)
  end
  table.insert(by_zone[zone], key)
end
table.sort(zones)
local reply = {'ok', 0}
for _, zone in ipairs(zones) do
  local zone_key = ARGV[7] .. zone
  local expired = {}
  for _, key in ipairs(by_zone[zone]) do
    table.insert(expired, key)
    table.insert(expired, redis.call('HGET', zone_key, key))
    remove(zone_key, zone, key)
  end
  if redis.call('EXISTS', zone_key) == 0 then redis.call('SREM', KEYS[4], zone) end
  local body = '{"op":"expire","zone":' .. cjson.encode(zone) .. ',"keys":' .. cjson.encode(by_zone[zone]) .. '}'
  reply[2] = commit(body, zone, nil)
  table.insert(reply, zone)
  table.insert(reply, expired)
end
return reply
