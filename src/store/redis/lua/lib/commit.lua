-- Shared prelude of every keyval mutation script (prepended after lib/log.lua when loaded).
-- Conventions for mutation scripts:
--   KEYS[1] revision   KEYS[2] epoch   KEYS[3] log   KEYS[4] zones   KEYS[5] expiry   KEYS[6] audit
--   KEYS[7] zone-bytes (zone → the bytes its entries take, as keyval-bytes.ts charges them)
--   ARGV[1] a fresh random id: the epoch if none is set yet, and the commit id of this mutation's
--     change (`<id>`, or `<id>:<n>` for the n-th change of a mutation that makes several)
--   ARGV[2] change log length bound   ARGV[3] pub/sub channel   ARGV[4] writer's clock, epoch ms
--   ARGV[5] audit note JSON {timeMs, tokenId, client, reason}, or '' to record no audit entry
--   ARGV[6] audit list length bound
-- Replies: {'ok', revision, ...} or {'err', code, detail}.

local NOW = tonumber(ARGV[4])

-- member of the expiry zset for one key
local function member(zone, key)
  return zone .. '\0' .. key
end

-- a key is live when stored and not past its expiry
local function live(zone_key, zone, key)
  if redis.call('HEXISTS', zone_key, key) == 0 then return false end
  local at = redis.call('ZSCORE', KEYS[5], member(zone, key))
  return (not at) or tonumber(at) > NOW
end

-- the value of a stored entry JSON, or cjson.null for none
local function value_of(json)
  if not json then return cjson.null end
  return cjson.decode(json).value
end

-- the slab bytes one entry takes (keyval-bytes.ts: node 72 + key + value, rounded up to a power of
-- two from 8 up to half a page, whole 4096-byte pages above)
local function entry_bytes(key, value)
  local n = 72 + #key + #value
  if n > 2048 then return math.ceil(n / 4096) * 4096 end
  local chunk = 8
  while chunk < n do chunk = chunk * 2 end
  return chunk
end

-- the bytes a zone's entries take: the running total, counted once for data written before it
local function zone_bytes(zone, zone_key)
  local total = redis.call('HGET', KEYS[7], zone)
  if total then return tonumber(total) end
  total = 0
  local all = redis.call('HGETALL', zone_key)
  for i = 1, #all, 2 do total = total + entry_bytes(all[i], value_of(all[i + 1])) end
  redis.call('HSET', KEYS[7], zone, total)
  return total
end

-- whether `items` ({key, value} pairs, replacing those keys) fit in `budget` bytes ('' = unbounded)
local function fits(zone_key, zone, items, budget)
  if budget == '' then return true end
  local used = zone_bytes(zone, zone_key)
  for _, item in ipairs(items) do
    local old = redis.call('HGET', zone_key, item[1])
    if old then used = used - entry_bytes(item[1], value_of(old)) end
    used = used + entry_bytes(item[1], item[2])
  end
  return used <= tonumber(budget)
end

-- store one entry (json, holding `value`) with its expiry ('' = never), charging its bytes
local function put(zone_key, zone, key, json, expire_at, value)
  local used = zone_bytes(zone, zone_key)
  local old = redis.call('HGET', zone_key, key)
  if old then used = used - entry_bytes(key, value_of(old)) end
  redis.call('HSET', KEYS[7], zone, used + entry_bytes(key, value))
  redis.call('HSET', zone_key, key, json)
  if expire_at == '' then
    redis.call('ZREM', KEYS[5], member(zone, key))
  else
    redis.call('ZADD', KEYS[5], expire_at, member(zone, key))
  end
  redis.call('SADD', KEYS[4], zone)
end

-- remove one entry, giving its bytes back
local function remove(zone_key, zone, key)
  local old = redis.call('HGET', zone_key, key)
  if not old then return end
  redis.call('HSET', KEYS[7], zone, zone_bytes(zone, zone_key) - entry_bytes(key, value_of(old)))
  redis.call('HDEL', zone_key, key)
  redis.call('ZREM', KEYS[5], member(zone, key))
end

-- one audit entry per changed key ({key, old, new}; old/new a string or cjson.null), or one with a
-- null key when nothing was changed (a zone emptied while empty); nothing without a note
local function audit(zone, revision, changes)
  if ARGV[5] == '' then return end
  local note = cjson.decode(ARGV[5])
  if #changes == 0 then changes = {{cjson.null, cjson.null, cjson.null}} end
  for _, c in ipairs(changes) do
    redis.call('LPUSH', KEYS[6], cjson.encode({
      timeMs = note.timeMs, tokenId = note.tokenId, client = note.client, zone = zone,
      key = c[1], old = c[2], new = c[3], revision = revision, reason = note.reason,
    }))
  end
  redis.call('LTRIM', KEYS[6], 0, tonumber(ARGV[6]) - 1)
end

local commits = 0

-- bump the revision, append the change (a JSON object without its revision) to the bounded log with
-- its commit id and its parent's (the history it continues), publish it with the epoch, audit
-- `changes` (see audit); returns the new revision
local function commit(body, zone, changes)
  redis.call('SET', KEYS[2], ARGV[1], 'NX')
  local epoch = redis.call('GET', KEYS[2])
  local parent = head_commit(KEYS[3], tonumber(redis.call('GET', KEYS[1]) or '0'))
  commits = commits + 1
  local id = ARGV[1]
  if commits > 1 then id = id .. ':' .. commits end
  local revision = redis.call('INCR', KEYS[1])
  local change = '{"revision":' .. revision .. ',"commit":"' .. id .. '","parent":"' .. parent .. '",'
    .. string.sub(body, 2)
  redis.call('XADD', KEYS[3], 'MAXLEN', ARGV[2], revision .. '-0', 'c', change, 'k', id)
  redis.call('PUBLISH', ARGV[3], '{"epoch":"' .. epoch .. '","change":' .. change .. '}')
  if changes then audit(zone, revision, changes) end
  return revision
end
