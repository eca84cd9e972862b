-- The first store step of an attempt: the loop pre-check read and, for a side-effecting tool,
-- the idempotency claim (DESIGN section 5).
-- KEYS[1] loop window, KEYS[2] record index, KEYS[3] idempotency record (KEYS[1] when no claim)
-- ARGV[1] op, ARGV[2] lease in ms ('' when no claim), ARGV[3] the claim's owner (kept in the
-- in-progress record, 'P' .. owner, so that only this claim can release it)
-- Returns {streak count, streak failed (0|1), claim state ('' when no claim), stored result JSON}.
local count, failed = streak_of(KEYS[1], ARGV[1])
if ARGV[2] == '' then
  return {count, failed, '', ''}
end
local record = redis.call('GET', KEYS[3])
if record then
  local state = string.sub(record, 1, 1)
  if state == 'C' then
    return {count, failed, 'completed', string.sub(record, 2)}
  elseif state == 'U' then
    return {count, failed, 'unknown', ''}
  end
  return {count, failed, 'in_progress', ''}
end
local lease = tonumber(ARGV[2])
local now = now_ms()
redis.call('SET', KEYS[3], 'P' .. ARGV[3], 'PX', lease)
index_add(KEYS[2], KEYS[3], now + lease, now)
return {count, failed, 'claimed', ''}
