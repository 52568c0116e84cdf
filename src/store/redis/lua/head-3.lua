-- head: the revision, the epoch and the revision's commit id, read together (sets the epoch if none yet).
-- KEYS[1] revision; KEYS[2] epoch; KEYS[3] log
-- ARGV[1] epoch candidate
-- Returns {revision, epoch, commit id ('' at revision 0)}
redis.call('SET', KEYS[2], ARGV[1], 'NX')
local revision = tonumber(redis.call('GET', KEYS[1]) or '0')
return {revision, redis.call('GET', KEYS[2]), head_commit(KEYS[3], revision)}
