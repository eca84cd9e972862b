-- Forgets an approval whose wait ended (decided, timed out or cut short).
-- KEYS: see approvals-lib.lua. ARGV[1]: the approval id; ARGV[2]: the id of its replica when it
-- held no other wait of the tenant (its lease goes), else ''. Returns 1 when it was indexed.
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if ARGV[2] and ARGV[2] ~= '' then
  redis.call('HDEL', KEYS[5], ARGV[2])
end
return redis.call('ZREM', KEYS[1], ARGV[1])
