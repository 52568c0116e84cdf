-- snapshot: everything with its revision and epoch, read atomically (sets the epoch if none yet).
-- KEYS[1] revision; KEYS[2] epoch; KEYS[3] zones; KEYS[4] expiry (unused, declared for the slot)
-- ARGV[1] epoch candidate; ARGV[2] prefix of the zone hashes
-- Returns {revision, epoch, zone, {key, entry JSON, ...}, zone, {...}, ...}
redis.call('SET', KEYS[2], ARGV[1], 'NX')
local reply = {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('GET', KEYS[2])}
for _, zone in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  table.insert(reply, zone)
  table.insert(reply, redis.call('HGETALL', ARGV[2] .. zone))
end
return reply
