-- empty (DELETE): remove every key of a zone; succeeds (and bumps the revision) on an empty zone.
-- KEYS[1..5] see lib/commit.lua; KEYS[6] the zone hash
-- ARGV[1..4] see lib/commit.lua; ARGV[5] zone; ARGV[6] change JSON (no revision)
-- Returns {'ok', revision, {key, entry JSON, key, entry JSON, ...}}
local zone = ARGV[5]
local previous = redis.call('HGETALL', KEYS[6])
for i = 1, #previous, 2 do
  redis.call('ZREM', KEYS[5], member(zone, previous[i]))
end
redis.call('DEL', KEYS[6])
redis.call('SREM', KEYS[4], zone)
return {'ok', commit(ARGV[6]), previous}
