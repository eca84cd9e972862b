-- Adds one replica's sealed batch of a tenant's GetToolStats counts, once.
-- KEYS[1] the tenant's counts hash; KEYS[2] this replica's last applied sequence number for it;
-- KEYS[3] the hash of the rate window's bucket the batch counts in (the same fields).
-- ARGV[1] the batch's sequence number; ARGV[2] the hash's TTL (s); ARGV[3] the sequence number's
-- TTL (s); ARGV[4] the fields past which a tool the hash has no `<tool>\0calls` of is left out (its
-- counts not added); ARGV[5] the bucket hash's TTL (ms); then `field, delta` pairs. Returns 1, or 0
-- when the batch was applied before (a resend after a lost reply).
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) <= last then return 0 end
local max = tonumber(ARGV[4])
for i = 6, #ARGV, 2 do
  local field = ARGV[i]
  local add = true
  if redis.call('HLEN', KEYS[1]) >= max and redis.call('HEXISTS', KEYS[1], field) == 0 then
    local cut = string.find(field, '\0', 1, true)
    add = cut ~= nil and redis.call('HEXISTS', KEYS[1], string.sub(field, 1, cut) .. 'calls') == 1
  end
  if add then
    redis.call('HINCRBY', KEYS[1], field, ARGV[i + 1])
    redis.call('HINCRBY', KEYS[3], field, ARGV[i + 1])
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[5]) end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
return 1
