-- One page of the approvals waiting for a tenant on any replica that a filter passes, the first to
-- end first, after forgetting those whose wait has ended. The filter is matched on the small
-- values of KEYS[3]; only the page's JSON is read. KEYS: see approvals-lib.lua. ARGV[1]: the
-- session ('' for any); ARGV[2]: the tool ('' for any); ARGV[3]: most entries in the page;
-- ARGV[4]: most bytes of JSON in the page (its first entry whatever its size); ARGV[5]: most ids
-- read (the index's bound). An id indexed without its filter values (written before they were)
-- passes no filter, only none. An id whose replica's lease has lapsed (the replica died, or lost
-- Redis: it can neither forget it nor hear a decision) is not returned; one indexed without its
-- replica (by an earlier version) is.
-- Returns 1 when more entries pass than the page holds (else 0), then id, JSON, id, JSON, ...
-- ('' for an id indexed without its JSON).
local now = now_ms()
prune(now)
local out = { 0 }
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. int(now), '+inf', 'LIMIT', 0, tonumber(ARGV[5]))
if #ids == 0 then
  return out
end
local session, tool = ARGV[1], ARGV[2]
local filtered = session ~= '' or tool ~= ''
local who = filtered and redis.call('HMGET', KEYS[3], unpack(ids)) or {}

local function passes(value)
  if not value then
    return false
  end
  local cut = string.find(value, '\0', 1, true)
  if not cut then
    return false
  end
  return (tool == '' or string.sub(value, 1, cut - 1) == tool) and (session == '' or string.sub(value, cut + 1) == session)
end

-- Each replica's lease read once.
local leases = {}
local function lives(id)
  local replica = redis.call('HGET', KEYS[4], id)
  if not replica then
    return true
  end
  if leases[replica] == nil then
    leases[replica] = tonumber(redis.call('HGET', KEYS[5], replica) or '0') or 0
  end
  return leases[replica] > now
end

local maxEntries, maxBytes = tonumber(ARGV[3]), tonumber(ARGV[4])
local entries, bytes = 0, 0
for i, id in ipairs(ids) do
  if (not filtered or passes(who[i])) and lives(id) then
    if entries == maxEntries then
      out[1] = 1
      break
    end
    local json = redis.call('HGET', KEYS[2], id) or ''
    if entries > 0 and bytes + #json > maxBytes then
      out[1] = 1
      break
    end
    entries = entries + 1
    bytes = bytes + #json
    out[#out + 1] = id
    out[#out + 1] = json
  end
end
return out
