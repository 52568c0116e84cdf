-- lease-release: give a lease back only if it is still held with this token (compare-and-delete).
-- KEYS[1] the lease key
-- ARGV[1] the holder's token
-- Returns 1 when released, 0 when it had lapsed or belongs to another holder
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
