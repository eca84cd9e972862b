-- Gives back a call's count against a session budget (begin-attempt.lua counted it before its
-- approval was asked, and the approval was not granted: docs/policies.md, "Session budgets"): the
-- count goes down by one only while the call's mark is there and holds the counts' current epoch,
-- then the mark is deleted, so a second give-back does nothing. Nothing is given back once the
-- counts expired or the session ended (its counts were deleted with their epoch; a mark of the
-- ended session holds an epoch no count has), and the count never goes below zero.
-- KEYS[1] the session's budgets (hash of budget -> calls counted, NUL 'since' -> their epoch),
-- KEYS[2] the mark of the call's token for that budget
-- ARGV[1] the budget
-- Returns 1 when the count was given back, 0 when there was nothing to give back.
local mark = redis.call('GET', KEYS[2])
if not mark then
  return 0
end
local given = 0
if redis.call('HGET', KEYS[1], '\0since') == mark then
  local used = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
  -- The count before the mark: a script refused at its first write (Redis out of memory) changed
  -- nothing, and the count stays.
  if used > 0 then
    redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
    given = 1
  end
end
redis.call('DEL', KEYS[2])
return given
