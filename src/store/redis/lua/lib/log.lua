-- Shared prelude of the scripts that read commit ids from the change log (prepended when loaded).
-- Each log entry is `<revision>-0` with fields `c` (the change JSON) and `k` (its commit id).

-- the commit id of a log entry ({id, {field, value, ...}}), or false
local function commit_of(entry)
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'k' then return fields[i + 1] end
  end
  return false
end

-- the commit id of `revision`, when it is the newest entry of `log`; '' at revision 0 (or an empty log)
local function head_commit(log, revision)
  if revision == 0 then return '' end
  local last = redis.call('XREVRANGE', log, '+', '-', 'COUNT', 1)
  if #last == 1 and last[1][1] == revision .. '-0' then return commit_of(last[1]) or '' end
  return ''
end
