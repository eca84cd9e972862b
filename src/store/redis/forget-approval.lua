-- Forgets an approval whose wait ended (decided, timed out or cut short).
-- KEYS: see approvals-lib.lua. ARGV[1]: the approval id. Returns 1 when it was indexed.
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
