-- add (POST): add keys to a zone; several keys only into an empty zone; fails if any key is live.
-- KEYS[1..6] see lib/commit.lua; KEYS[7] the zone hash
-- ARGV[1..6] see lib/commit.lua; ARGV[7] zone; ARGV[8] change JSON (no revision);
--   then per key: ARGV[9+4i] key, ARGV[10+4i] entry JSON, ARGV[11+4i] expireAtMs or '', ARGV[12+4i] value
-- Returns {'ok', revision} | {'err', 'only-one'} | {'err', 'exists', key}
local zone = ARGV[7]
local first = 9
if (#ARGV - first + 1) / 4 > 1 then
  for _, key in ipairs(redis.call('HKEYS', KEYS[7])) do
    if live(KEYS[7], zone, key) then return {'err', 'only-one'} end
  end
end
for i = first, #ARGV, 4 do
  if live(KEYS[7], zone, ARGV[i]) then return {'err', 'exists', ARGV[i]} end
end
local changes = {}
for i = first, #ARGV, 4 do
  put(KEYS[7], zone, ARGV[i], ARGV[i + 1], ARGV[i + 2])
  table.insert(changes, {ARGV[i], cjson.null, ARGV[i + 3]})
end
return {'ok', commit(ARGV[8], zone, changes)}
