-- EndSession: deletes the session's idempotency records, loop window, spilled results, memory
-- and call budgets.
-- KEYS[1] loop window, KEYS[2] memory, KEYS[3] record index, KEYS[4] result index, KEYS[5] budgets
-- Every key named in the indexes shares the session's hash tag, hence this node and slot.
for _, index in ipairs({KEYS[3], KEYS[4]}) do
  local members = redis.call('ZRANGE', index, 0, -1)
  for i = 1, #members do
    redis.call('DEL', members[i])
  end
end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
