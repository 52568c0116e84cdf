-- add (POST): add keys to a zone; several keys only into an empty zone; fails if any key is live or
-- the entries would not fit in the zone's size.
-- KEYS[1..7] see lib/commit.lua; KEYS[8] the zone hash
-- ARGV[1..6] see lib/commit.lua; ARGV[7] zone; ARGV[8] change JSON (no revision); ARGV[9] the zone's
--   budget in bytes or '' (unbounded);
--   then per key: ARGV[10+4i] key, ARGV[11+4i] entry JSON, ARGV[12+4i] expireAtMs or '', ARGV[13+4i] value
-- Returns {'ok', revision} | {'err', 'only-one'} | {'err', 'exists', key} | {'err', 'full'}
local zone = ARGV[7]
local first = 10
if (#ARGV - first + 1) / 4 > 1 then
  for _, key in ipairs(redis.call('HKEYS', KEYS[8])) do
    if live(KEYS[8], zone, key) then return {'err', 'only-one'} end
  end
end
local items = {}
for i = first, #ARGV, 4 do
  if live(KEYS[8], zone, ARGV[i]) then return {'err', 'exists', ARGV[i]} end
  table.insert(items, {ARGV[i], ARGV[i + 3]})
end
if not fits(KEYS[8], zone, items, ARGV[9]) then return {'err', 'full'} end
local changes = {}
for i = first, #ARGV, 4 do
  put(KEYS[8], zone, ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3])
  table.insert(changes, {ARGV[i], cjson.null, ARGV[i + 3]})
end
return {'ok', commit(ARGV[8], zone, changes)}
