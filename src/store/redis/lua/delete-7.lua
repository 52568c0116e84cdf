-- delete (PATCH with null): remove one live key.
-- KEYS[1..6] see lib/commit.lua; KEYS[7] the zone hash
-- ARGV[1..6] see lib/commit.lua; ARGV[7] zone; ARGV[8] change JSON (no revision); ARGV[9] key
-- Returns {'ok', revision, previous entry JSON} | {'err', 'not-found'}
local zone, key = ARGV[7], ARGV[9]
if not live(KEYS[7], zone, key) then return {'err', 'not-found'} end
local previous = redis.call('HGET', KEYS[7], key)
redis.call('HDEL', KEYS[7], key)
redis.call('ZREM', KEYS[5], member(zone, key))
if redis.call('EXISTS', KEYS[7]) == 0 then redis.call('SREM', KEYS[4], zone) end
return {'ok', commit(ARGV[8], zone, {{key, value_of(previous), cjson.null}}), previous}
