-- record-put: write or delete a lease holder's record, only while the lease is held with this token;
-- records past their expiry are dropped on the way (a bounded number per call).
-- KEYS[1] the lease key; KEYS[2] lease-records hash; KEYS[3] lease-records-expiry zset
-- ARGV[1] the holder's token; ARGV[2] record name; ARGV[3] record JSON, or '' to delete;
--   ARGV[4] the record's expireAtMs or '' (never); ARGV[5] writer's clock, epoch ms
-- Returns 1 when written, 0 when the lease is not held with this token (nothing written)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
for _, name in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[5], 'LIMIT', 0, 100)) do
  redis.call('HDEL', KEYS[2], name)
  redis.call('ZREM', KEYS[3], name)
end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[2], ARGV[2])
  redis.call('ZREM', KEYS[3], ARGV[2])
  return 1
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[3], ARGV[2])
else
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
end
return 1
