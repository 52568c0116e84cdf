-- put: change (PATCH: the key must be live) or set (upsert) one key.
-- KEYS[1..5] see lib/commit.lua; KEYS[6] the zone hash
-- ARGV[1..4] see lib/commit.lua; ARGV[5] zone; ARGV[6] change JSON (no revision);
--   ARGV[7] 'change' | 'set'; ARGV[8] key; ARGV[9] entry JSON; ARGV[10] expireAtMs or ''
-- Returns {'ok', revision, previous entry JSON or false} | {'err', 'not-found'}
local zone, key = ARGV[5], ARGV[8]
local previous = false
if live(KEYS[6], zone, key) then
  previous = redis.call('HGET', KEYS[6], key)
elseif ARGV[7] == 'change' then
  return {'err', 'not-found'}
end
put(KEYS[6], zone, key, ARGV[9], ARGV[10])
return {'ok', commit(ARGV[6]), previous}
