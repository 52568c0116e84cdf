-- counters-add: one replica's counter batch, applied at most once per (replica, incarnation, seq).
-- KEYS[1] counter-batches hash (`<replica>\0<incarnation>` → last seq applied)
-- ARGV[1] prefix of the per-kind counter hashes (`counters:<kind>`, same hash tag)
-- ARGV[2] replica id; ARGV[3] incarnation; ARGV[4] seq
--   then per counter: ARGV[5+4i] kind, ARGV[6+4i] zone, ARGV[7+4i] field, ARGV[8+4i] delta
-- Returns 1 when applied, 0 when this batch was applied before
local batch = ARGV[2] .. '\0' .. ARGV[3]
local seq = tonumber(ARGV[4])
if tonumber(redis.call('HGET', KEYS[1], batch) or '0') >= seq then return 0 end
redis.call('HSET', KEYS[1], batch, seq)
for i = 5, #ARGV, 4 do
  redis.call('HINCRBY', ARGV[1] .. ARGV[i], ARGV[2] .. '\0' .. ARGV[i + 1] .. '\0' .. ARGV[i + 2], ARGV[i + 3])
end
return 1
