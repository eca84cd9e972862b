-- EndSession: deletes the session's idempotency records, loop window, spilled results, memory
-- and call budgets; a claim still in progress stays until its lease ends, so that an identical
-- call meanwhile does not run the side effect a second time. Then announces the end, so that
-- every replica drops what it keeps of the session beside Redis (memoized results).
-- Leaves the session's end mark, when it ended (Redis's TIME in µs), so that a call of a turn
-- begun before the end writes back only its idempotency record (finish-attempt.lua); it lives
-- ARGV[3] ms, and at least as long as the session's longest record or claim in progress.
-- KEYS[1] loop window, KEYS[2] memory, KEYS[3] record index, KEYS[4] result index, KEYS[5] budgets,
-- KEYS[6] end mark
-- ARGV[1] the channel of session ends, ARGV[2] the announcement, ARGV[3] the end mark's life in ms
local ended = now_us()
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
local mark_until = math.floor(ended / 1000) + tonumber(ARGV[3])
if last[2] and tonumber(last[2]) > mark_until then mark_until = tonumber(last[2]) end
-- Every key named in the indexes shares the session's hash tag, hence this node and slot.
local records = redis.call('ZRANGE', KEYS[3], 0, -1)
local running = 0
for i = 1, #records do
  -- The first byte only: a completed record may hold megabytes.
  if redis.call('GETRANGE', records[i], 0, 0) == 'P' then
    running = running + 1
  else
    redis.call('DEL', records[i])
    redis.call('ZREM', KEYS[3], records[i])
  end
end
local results = redis.call('ZRANGE', KEYS[4], 0, -1)
for i = 1, #results do
  redis.call('DEL', results[i])
end
if running == 0 then
  redis.call('DEL', KEYS[3])
end
local deleted = redis.call('DEL', KEYS[1], KEYS[2], KEYS[4], KEYS[5])
-- After the deletes: a Redis out of memory refuses a script's first write, not the later ones.
redis.call('SET', KEYS[6], int(ended))
redis.call('PEXPIREAT', KEYS[6], int(mark_until))
redis.call('PUBLISH', ARGV[1], ARGV[2])
return deleted
