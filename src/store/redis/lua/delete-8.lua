-- delete (PATCH with null): remove one live key.
-- KEYS[1..7] see lib/commit.lua; KEYS[8] the zone hash
-- ARGV[1..6] see lib/commit.lua; ARGV[7] zone; ARGV[8] change JSON (no revision); ARGV[9] key
-- Returns {'ok', revision, previous entry JSON} | {'err', 'not-found'}
local zone, key = ARGV[7], ARGV[9]
if not live(KEYS[8], zone, key) then return {'err', 'not-found'} end
local previous = redis.call('HGET', KEYS[8], key)
remove(KEYS[8], zone, key)
if redis.call('EXISTS', KEYS[8]) == 0 then redis.call('SREM', KEYS[4], zone) end
return {'ok', commit(ARGV[8], zone, {{key, value_of(previous), cjson.null}}), previous}
