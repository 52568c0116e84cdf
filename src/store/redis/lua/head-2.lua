-- head: the revision and the epoch, read together (sets the epoch if none yet).
-- KEYS[1] revision; KEYS[2] epoch
-- ARGV[1] epoch candidate
-- Returns {revision, epoch}
redis.call('SET', KEYS[2], ARGV[1], 'NX')
return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('GET', KEYS[2])}
