-- put: change (PATCH: the key must be live) or set (upsert) one key; fails if it would not fit.
-- KEYS[1..7] see lib/commit.lua; KEYS[8] the zone hash
-- ARGV[1..6] see lib/commit.lua; ARGV[7] zone; ARGV[8] change JSON (no revision);
--   ARGV[9] 'change' | 'set'; ARGV[10] key; ARGV[11] entry JSON; ARGV[12] expireAtMs or ''; ARGV[13] value;
--   ARGV[14] the zone's budget in bytes or '' (unbounded)
-- Returns {'ok', revision, previous entry JSON or false} | {'err', 'not-found'} | {'err', 'full'}
local zone, key = ARGV[7], ARGV[10]
local previous = false
if live(KEYS[8], zone, key) then
  previous = redis.call('HGET', KEYS[8], key)
elseif ARGV[9] == 'change' then
  return {'err', 'not-found'}
end
if not fits(KEYS[8], zone, {{key, ARGV[13]}}, ARGV[14]) then return {'err', 'full'} end
put(KEYS[8], zone, key, ARGV[11], ARGV[12], ARGV[13])
return {'ok', commit(ARGV[8], zone, {{key, value_of(previous), ARGV[13]}}), previous}
