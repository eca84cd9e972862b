-- Renews a replica's lease in a tenant's approvals index while it holds waits of the tenant (see
-- approvals-lib.lua, KEYS[5]): ListApprovals lists them only while it lives. KEYS: see
-- approvals-lib.lua (only KEYS[5] is written). ARGV[1]: the replica id; ARGV[2]: the lease, in ms.
local now = now_ms()
local lease = tonumber(ARGV[2])
redis.call('HSET', KEYS[5], ARGV[1], int(now + lease))
if redis.call('PTTL', KEYS[5]) < lease then
  redis.call('PEXPIRE', KEYS[5], lease)
end
return 1
