-- Takes one of a tool's concurrency slots shared by every replica, first come first served.
-- KEYS[1]: the tool's slot set: member a lease id, score the lease's end (ms, Redis's clock).
-- KEYS[2]: the line of waiting calls: member a lease id, score its ticket (the order it asked in).
-- KEYS[3]: when each waiting call is deemed gone unless it tries again (ms, Redis's clock).
-- KEYS[4]: the last ticket given.
-- ARGV[1]: slots in all (max_in_flight); ARGV[2]: the lease, in ms; ARGV[3]: this call's lease id;
-- ARGV[4]: 1 when the call will wait (it joins the line when no slot is its), 0 when it will not;
-- ARGV[5]: how long a waiting call keeps its place without trying again, in ms;
-- ARGV[6]: each tenant's share (max_in_flight_per_tenant; 0 or none: no share). Under a share a
-- lease id ends in '|' and its calling tenant (the prefix before it holds no '|').
-- A slot is taken only by a call with fewer calls ahead of it in line than slots free, so a call
-- never overtakes one that waits longer. Leases past their end are dropped first (a replica that
-- died holding a slot frees it at the end of its lease), and so are waiting calls that stopped
-- trying (their replica died). Under a share, a call whose tenant holds its share (its leases, and
-- the calls of its tenant ahead in line that may take one first) takes none, and only the calls
-- ahead that may take a slot count as ahead: one tenant's calls waiting for their own share never
-- hold up another tenant's. Both counts are read and the slot taken in this one step. Returns 1
-- when taken, 0 when not, 2 when not because the tenant holds its share (the call is then in line
-- if it waits).
-- Makes `key` live at least `ms` more (never shortens it).
local function outlive(key, ms)
  if redis.call('PTTL', key) < ms then
    redis.call('PEXPIRE', key, ms)
  end
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
-- Removed a thousand at a time: Lua cannot unpack many thousands of values at once (a replica
-- that died with thousands of calls waiting would otherwise make every take fail).
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for i = 1, #gone, 1000 do
  local last = math.min(i + 999, #gone)
  redis.call('ZREM', KEYS[2], unpack(gone, i, last))
  redis.call('ZREM', KEYS[3], unpack(gone, i, last))
end
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1])
local rank = redis.call('ZRANK', KEYS[2], ARGV[3])
local ahead = rank or redis.call('ZCARD', KEYS[2])
local lease = tonumber(ARGV[2])
local share = tonumber(ARGV[6]) or 0
local refused = 0
if share > 0 then
  local function tenantOf(id)
    local at = string.find(id, '|', 1, true)
    return at and string.sub(id, at + 1) or ''
  end
  -- The slot set holds at most max_in_flight live leases: counted whole.
  local held = {}
  for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    local t = tenantOf(id)
    held[t] = (held[t] or 0) + 1
  end
  ahead = 0
  if rank ~= 0 then
    for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, rank and rank - 1 or -1)) do
      local t = tenantOf(id)
      if (held[t] or 0) < share then
        held[t] = (held[t] or 0) + 1
        ahead = ahead + 1
      end
    end
  end
  if (held[tenantOf(ARGV[3])] or 0) >= share then
    refused = 2
    ahead = free
  end
end
if ahead < free then
  if rank then
    redis.call('ZREM', KEYS[2], ARGV[3])
    redis.call('ZREM', KEYS[3], ARGV[3])
  end
  redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
  -- The set lives as long as its longest lease (leases differ: a call's rate wait, a tool's
  -- timeout changed by a rolling deploy).
  outlive(KEYS[1], lease)
  return 1
end
if ARGV[4] == '1' then
  if not rank then
    redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ARGV[3])
  end
  local keep = tonumber(ARGV[5])
  redis.call('ZADD', KEYS[3], now + keep, ARGV[3])
  for i = 2, 4 do
    outlive(KEYS[i], keep + lease)
  end
end
return refused
