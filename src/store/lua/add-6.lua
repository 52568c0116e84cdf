-- add (POST): add keys to a zone; several keys only into an empty zone; fails if any key is live.
-- KEYS[1..5] see lib/commit.lua; KEYS[6] the zone hash
-- ARGV[1..4] see lib/commit.lua; ARGV[5] zone; ARGV[6] change JSON (no revision);
--   then per key: ARGV[7+3i] key, ARGV[8+3i] entry JSON, ARGV[9+3i] expireAtMs or ''
-- Returns {'ok', revision} | {'err', 'only-one'} | {'err', 'exists', key}
local zone = ARGV[5]
local first = 7
if (#ARGV - first + 1) / 3 > 1 then
  for _, key in ipairs(redis.call('HKEYS', KEYS[6])) do
    if live(KEYS[6], zone, key) then return {'err', 'only-one'} end
  end
end
for i = first, #ARGV, 3 do
  if live(KEYS[6], zone, ARGV[i]) then return {'err', 'exists', ARGV[i]} end
end
for i = first, #ARGV, 3 do
  put(KEYS[6], zone, ARGV[i], ARGV[i + 1], ARGV[i + 2])
end
return {'ok', commit(ARGV[6])}
