-- restore: write zones back into a store that has had no change in its epoch (revision 0), one
-- 'set-many' change per zone in the order given; nothing once the store has any revision.
-- KEYS[1..7] see lib/commit.lua
-- ARGV[1..6] see lib/commit.lua; ARGV[7] prefix of the zone hashes (`kv:<zone>`, same hash tag);
--   then per zone: ARGV[8+3i] zone, ARGV[9+3i] change JSON (no revision), ARGV[10+3i] {key, entry
--   JSON, expireAtMs or '', value, ...} as a JSON array
-- Returns {'ok', last revision or 0, number of changes}
if tonumber(redis.call('GET', KEYS[1]) or '0') ~= 0 then return {'ok', 0, 0} end
local revision, changes = 0, 0
for i = 8, #ARGV, 3 do
  local zone, body, items = ARGV[i], ARGV[i + 1], cjson.decode(ARGV[i + 2])
  local zone_key = ARGV[7] .. zone
  local changed = {}
  for j = 1, #items, 4 do
    put(zone_key, zone, items[j], items[j + 1], items[j + 2], items[j + 3])
    table.insert(changed, {items[j], cjson.null, items[j + 3]})
  end
  revision = commit(body, zone, changed)
  changes = changes + 1
end
return {'ok', revision, changes}
