-- changes: the change log after a revision, read atomically with the revision.
-- KEYS[1] revision; KEYS[2] log
-- ARGV[1] after this revision
-- Returns {change JSON, ...} in revision order, or nil when the log no longer reaches back (or the
-- revision asked for is ahead of the store).
local revision = tonumber(redis.call('GET', KEYS[1]) or '0')
local after = tonumber(ARGV[1])
if after > revision then return false end
if after == revision then return {} end
local first = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)
if #first == 0 or tonumber(string.match(first[1][1], '^(%d+)')) > after + 1 then return false end
local out = {}
for i, entry in ipairs(redis.call('XRANGE', KEYS[2], string.format('%d-0', after + 1), '+')) do
  out[i] = entry[2][2]
end
return out
