-- put: change (PATCH: the key must be live) or set (upsert) one key.
-- KEYS[1..6] see lib/commit.lua; KEYS[7] the zone hash
-- ARGV[1..6] see lib/commit.lua; ARGV[7] zone; ARGV[8] change JSON (no revision);
--   ARGV[9] 'change' | 'set'; ARGV[10] key; ARGV[11] entry JSON; ARGV[12] expireAtMs or ''; ARGV[13] value
-- Returns {'ok', revision, previous entry JSON or false} | {'err', 'not-found'}
local zone, key = ARGV[7], ARGV[10]
local previous = false
if live(KEYS[7], zone, key) then
  previous = redis.call('HGET', KEYS[7], key)
elseif ARGV[9] == 'change' then
  return {'err', 'not-found'}
end
put(KEYS[7], zone, key, ARGV[11], ARGV[12])
return {'ok', commit(ARGV[8], zone, {{key, value_of(previous), ARGV[13]}}), previous}
