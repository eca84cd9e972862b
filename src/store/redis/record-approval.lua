-- Indexes an approval waiting on this replica under its tenant, for ListApprovals on any replica.
-- KEYS: see approvals-lib.lua. ARGV[1]: the approval id; ARGV[2]: how long its wait may last, in
-- ms; ARGV[3]: what ListApprovals shows of it (JSON); ARGV[4]: most approvals indexed per tenant;
-- ARGV[5]: its tool .. '\0' .. its session (what ListApprovals filters by); ARGV[6]: the id of
-- the replica holding it ('' for none: listed whatever its replica); ARGV[7]: that replica's
-- lease, in ms (renewed by renew-approvals-lease.lua).
-- The keys live as long as the longest wait in them may. Returns 1 when indexed, 0 when the
-- tenant's index is full.
local now = now_ms()
prune(now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return 0
end
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], int(now + ttl), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[5])
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[1], ARGV[6])
  redis.call('HSET', KEYS[5], ARGV[6], int(now + tonumber(ARGV[7])))
end
for i = 1, 5 do
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return 1
