-- counters-reset: zero one zone's counters of one kind on every replica record, and count the reset
-- in the zone's marker field `\0<zone>\0resets` (replica id empty), which replicas read to zero their
-- own status views.
-- KEYS[1] the kind's counters hash (fields `<replica>\0<zone>\0<field>`)
-- ARGV[1] zone
-- Returns the number of fields zeroed
local n = 0
local needle = '\0' .. ARGV[1] .. '\0'
local marker = needle .. 'resets'
local resets = tonumber(redis.call('HGET', KEYS[1], marker) or '0')
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  local first = string.find(field, '\0', 1, true)
  if first and string.sub(field, first, first + #needle - 1) == needle
      and not string.find(field, '\0', first + #needle, true) then
    redis.call('HSET', KEYS[1], field, 0)
    n = n + 1
  end
end
redis.call('HSET', KEYS[1], marker, resets + 1)
return n
