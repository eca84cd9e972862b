-- Adds one replica's sealed batch of a tenant's GetToolStats counts, once.
-- KEYS[1] the tenant's counts hash; KEYS[2] this replica's last applied sequence number for it.
-- ARGV[1] the batch's sequence number; ARGV[2] the hash's TTL (s); ARGV[3] the sequence number's
-- TTL (s); then `field, delta` pairs. Returns 1, or 0 when the batch was applied before (a resend
-- after a lost reply).
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
for i = 4, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
return 1
