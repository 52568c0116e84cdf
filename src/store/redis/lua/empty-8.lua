-- empty (DELETE): remove every key of a zone; succeeds (and bumps the revision) on an empty zone.
-- KEYS[1..7] see lib/commit.lua; KEYS[8] the zone hash
-- ARGV[1..6] see lib/commit.lua; ARGV[7] zone; ARGV[8] change JSON (no revision)
-- Returns {'ok', revision, {key, entry JSON, key, entry JSON, ...}}
local zone = ARGV[7]
local previous = redis.call('HGETALL', KEYS[8])
local changes = {}
for i = 1, #previous, 2 do
  redis.call('ZREM', KEYS[5], member(zone, previous[i]))
  table.insert(changes, {previous[i], value_of(previous[i + 1]), cjson.null})
end
redis.call('DEL', KEYS[8])
redis.call('HDEL', KEYS[7], zone)
redis.call('SREM', KEYS[4], zone)
return {'ok', commit(ARGV[8], zone, changes), previous}
