-- snapshot: everything with its revision, epoch and commit id, read atomically (sets the epoch if
-- none yet).
-- KEYS[1] revision; KEYS[2] epoch; KEYS[3] zones; KEYS[4] log
-- ARGV[1] epoch candidate; ARGV[2] prefix of the zone hashes
-- Returns {revision, epoch, commit id, zone, {key, entry JSON, ...}, zone, {...}, ...}
redis.call('SET', KEYS[2], ARGV[1], 'NX')
local revision = tonumber(redis.call('GET', KEYS[1]) or '0')
local reply = {revision, redis.call('GET', KEYS[2]), head_commit(KEYS[4], revision)}
for _, zone in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  table.insert(reply, zone)
  table.insert(reply, redis.call('HGETALL', ARGV[2] .. zone))
end
return reply
