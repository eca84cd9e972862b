-- Helpers shared by the approvals index scripts; prepended to each of them (after session-lib.lua) when they are defined.
-- KEYS[1] of each: a tenant's approvals waiting on any replica, a sorted set of approval ids
-- scored by when their wait ends (ms, Redis's clock); KEYS[2]: what ListApprovals shows of each,
-- a hash of approval id -> JSON; KEYS[3]: what ListApprovals filters by, a hash of approval id ->
-- tool .. '\0' .. session (a tool name holds no NUL), so that a filter reads these small values and
-- only the JSON it returns; KEYS[4]: which replica holds each wait, a hash of approval id ->
-- replica id (absent for a replica of an earlier version: listed as before); KEYS[5]: the leases
-- of the replicas holding the tenant's waits, a hash of replica id -> ms (Redis's clock) until
-- which it is known to live (renewed while it holds waits of the tenant). All share the tenant's
-- hash tag, hence one cluster slot.

-- now_ms and int are session-lib.lua's, prepended before this.

-- Forgets approvals whose wait has ended (their replica died before it forgot them), at most a
-- thousand at a time: Lua cannot unpack many thousands of values at once.
local function prune(now)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', int(now), 'LIMIT', 0, 1000)
  if #gone > 0 then
    redis.call('ZREM', KEYS[1], unpack(gone))
    redis.call('HDEL', KEYS[2], unpack(gone))
    redis.call('HDEL', KEYS[3], unpack(gone))
    redis.call('HDEL', KEYS[4], unpack(gone))
  end
end
