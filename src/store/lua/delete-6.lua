-- delete (PATCH with null): remove one live key.
-- KEYS[1..5] see lib/commit.lua; KEYS[6] the zone hash
-- ARGV[1..4] see lib/commit.lua; ARGV[5] zone; ARGV[6] change JSON (no revision); ARGV[7] key
-- Returns {'ok', revision, previous entry JSON} | {'err', 'not-found'}
local zone, key = ARGV[5], ARGV[7]
if not live(KEYS[6], zone, key) then return {'err', 'not-found'} end
local previous = redis.call('HGET', KEYS[6], key)
redis.call('HDEL', KEYS[6], key)
redis.call('ZREM', KEYS[5], member(zone, key))
if redis.call('EXISTS', KEYS[6]) == 0 then redis.call('SREM', KEYS[4], zone) end
return {'ok', commit(ARGV[6]), previous}
