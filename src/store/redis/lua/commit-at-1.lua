-- commit-at: the commit id of one revision, from the change log.
-- KEYS[1] log
-- ARGV[1] revision
-- Returns the commit id, or false when the log does not hold that revision (trimmed, or not yet)
local entry = redis.call('XRANGE', KEYS[1], ARGV[1] .. '-0', ARGV[1] .. '-0')
if #entry == 0 then return false end
return commit_of(entry[1])
