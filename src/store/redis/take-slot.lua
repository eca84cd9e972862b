-- Takes one of a tool's concurrency slots shared by every replica, when one is free.
-- KEYS[1]: the tool's slot set: member a lease id, score the lease's end (ms, Redis's clock).
-- ARGV[1]: slots in all (max_in_flight); ARGV[2]: the lease, in ms; ARGV[3]: this lease's id.
-- Leases past their end are dropped first: a replica that died holding a slot frees it at the
-- end of its lease. Returns 1 when taken, 0 when every slot is held.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
local lease = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + lease, ARGV[3])
-- The set lives as long as its latest lease (a tool's leases are all as long).
redis.call('PEXPIRE', KEYS[1], lease)
return 1
