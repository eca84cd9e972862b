-- Holds a claim of this replica's while its call's completion (or UNKNOWN mark) waits to be
-- written: Redis refused the finish step (full under noeviction, or away), and the claim's lease
-- must not end first, or an identical call would claim and run the tool again.
-- KEYS[1] idempotency record
-- ARGV[1] the claim's owner, ARGV[2] how long to hold it from now, in ms
-- Returns 1 when the record is still that owner's claim (it now lives at least ARGV[2] ms), 0 when
-- it is not (expired, replaced, or the completion written): there is nothing to hold.
-- Only GET, PTTL and PEXPIRE, which a Redis at its maxmemory still runs.
if redis.call('GET', KEYS[1]) ~= 'P' .. ARGV[1] then
  return 0
end
local ms = tonumber(ARGV[2])
if redis.call('PTTL', KEYS[1]) < ms then
  redis.call('PEXPIRE', KEYS[1], ms)
end
return 1
