-- The first store step of an attempt: the loop pre-check read, the session budget's count and,
-- for a side-effecting tool, the idempotency claim (DESIGN section 5).
-- KEYS[1] loop window, KEYS[2] record index, KEYS[3] idempotency record (KEYS[1] when no claim),
-- KEYS[4] the session's budgets, a hash of budget -> calls counted and NUL 'since' -> their epoch
-- (KEYS[1] when no budget),
-- KEYS[5] the op's loop-block probe, 'until:at:holder' (KEYS[1] when no block is given),
-- KEYS[6] the mark of the call's token for its budget (KEYS[1] when no token is given)
-- ARGV[1] op, ARGV[2] lease in ms ('' when no claim), ARGV[3] the claim's owner (kept in the
-- in-progress record, 'P' .. owner, so that only this claim can release it), ARGV[4] the budget
-- this call counts against ('' when none), ARGV[5] its size, ARGV[6] the budgets' TTL in seconds,
-- ARGV[7] the owner of an orphan claim on the record ('' when none): a claim of this replica's
-- whose answer never came, whose attempt ran nothing and whose release is still to be written,
-- ARGV[8] the owner of a claim on the record whose completion (or UNKNOWN mark) waits on this
-- replica to be written ('' when none): while the record is that claim or gone (its lease ended
-- while Redis refused writes), the state is 'waiting' and the replica answers from what waits,
-- ARGV[9] the tool's failure_block_threshold ('' when no block is given), ARGV[10] its cool-down
-- in ms, ARGV[11] the probe's lease in ms (0: only read whether another call holds it), ARGV[12] the call's token for its budget ('' when none):
-- a call is counted once per token, marked by the key KEYS[6] (the counts' epoch), which lives ARGV[14] ms (the
-- call's lease; each attempt that finds it makes it live so long again), not as long as the
-- counts: the marks of a session's calls never pile up, and the retry of an attempt whose answer
-- never came (this script ran late) is not counted again, ARGV[13] the probe's holder, this
-- call ('' when none): only it frees the probe it did not use (finish-attempt.lua), ARGV[14] the
-- life of the token's mark in ms ('' when no token is given)
-- Returns one text (packed_reply: one bulk string decodes far cheaper in the client than an
-- array of nine): streak count, streak failed (0|1|3), calls left in the budget after this one
-- (-1 when not counted), the streak's age in ms (-1: no failure's), the ms left of the wait the
-- op's newest record told (0: none), its toldRun, the probe (0: none due, -1: this call took it,
-- else the ms another call holds it: this one is refused, nothing counted or claimed), when this
-- step ran (Redis's TIME in µs: the turn's begin, which finish-attempt.lua compares with the
-- session's end mark), the claim
-- state ('' when no claim), then the stored result JSON, all joined by ','. A call answered from an
-- existing record (a replay, an identical call in progress, an unknown outcome, one waiting) runs nothing and
-- is not counted; the claim state is 'over_budget' (nothing counted or claimed) when the budget
-- was spent.
-- The probe (DESIGN section 6): once a blocked streak's cool-down is over (exactly blockLeftMs 0
-- in loop-block.ts), the first call that runs takes it for the lease; it is held for that streak
-- only (`at`, its newest counted failure), so a newer failure frees the next cool-down's probe;
-- its holder (ARGV[13]) gives it back when its tool did not run (finish-attempt.lua, ARGV[19]).
local began = now_us()
local now = math.floor(began / 1000)
-- Every reply's integers end with `began`.
local function begin_reply(numbers, state, text)
  numbers[#numbers + 1] = began
  return packed_reply(numbers, state, text)
end
local count, failed, since, wait, run, at = streak_of(KEYS[1], ARGV[1], now)
local probe = 0
local due = ARGV[9] ~= '' and failed == 1 and count >= tonumber(ARGV[9]) and since >= tonumber(ARGV[10]) and wait == 0
if due then
  local held = redis.call('GET', KEYS[5])
  -- 'until:at', then ':holder' (none in a claim of 45ace23's).
  local ends, held_at = string.match(held or '', '^(%d+):(%d+)')
  if held_at == int(at) and tonumber(ends) > now then
    return begin_reply({count, failed, -1, since, wait, run, tonumber(ends) - now}, '', '')
  end
end
-- Takes the probe when due: the call runs.
local function take_probe()
  local lease = tonumber(ARGV[11])
  if not due or lease == 0 then return 0 end
  redis.call('SET', KEYS[5], int(now + lease) .. ':' .. int(at) .. ':' .. ARGV[13], 'PX', lease)
  return -1
end
if ARGV[2] ~= '' then
  local record = redis.call('GET', KEYS[3])
  -- An orphan claim still in progress is given up (this claim replaces it below), as its pending
  -- release would do a moment later: it must not make its own call's retry IN_PROGRESS.
  if record and ARGV[7] ~= '' and record == 'P' .. ARGV[7] then
    record = false
  end
  if ARGV[8] ~= '' and (not record or record == 'P' .. ARGV[8]) then
    return begin_reply({count, failed, -1, since, wait, run, 0}, 'waiting', '')
  end
  if record then
    local state = string.sub(record, 1, 1)
    if state == 'C' then
      return begin_reply({count, failed, -1, since, wait, run, 0}, 'completed', string.sub(record, 2))
    elseif state == 'U' then
      return begin_reply({count, failed, -1, since, wait, run, 0}, 'unknown', '')
    end
    return begin_reply({count, failed, -1, since, wait, run, 0}, 'in_progress', '')
  end
end
local left = -1
-- The budget is read here, counted below with the other writes.
local counts = false
local refresh = false
local mark = ARGV[4] ~= '' and ARGV[12] ~= '' and KEYS[6]
-- The counts' epoch: when KEYS[4] was made and by whom (its field NUL 'since'); a mark holds the epoch it was
-- counted in, so a session's end (which deletes the counts) forgets the marks too.
local epoch = ARGV[4] ~= '' and redis.call('HGET', KEYS[4], '\0since')
if ARGV[4] ~= '' then
  local max = tonumber(ARGV[5])
  local used = tonumber(redis.call('HGET', KEYS[4], ARGV[4]) or '0')
  if mark and epoch and redis.call('GET', mark) == epoch then
    -- Counted already by an earlier attempt of this call: not again, and never over its budget.
    left = math.max(0, max - used)
    -- Its mark lives the call's lease again, written after the claim (below): a write before it
    -- would let the claim pass an out-of-memory Redis.
    refresh = true
  else
    if used >= max then
      return begin_reply({count, failed, 0, since, wait, run, 0}, 'over_budget', '')
    end
    counts = true
  end
end
-- The claim is the first write, so that Redis out of memory refuses it (a script's first write is
-- refused then, not the later ones); without a claim the count is. A script that fails after its
-- first write (a command the ACL denies) undoes what it wrote: an error reply means no claim and
-- nothing counted, and redis-store.ts queues no release for it.
local lease = tonumber(ARGV[2])
if lease then redis.call('SET', KEYS[3], 'P' .. ARGV[3], 'PX', lease) end
local counted = false
local ok, probe = pcall(function()
  if counts then
    left = tonumber(ARGV[5]) - redis.call('HINCRBY', KEYS[4], ARGV[4], 1)
    counted = true
    redis.call('EXPIRE', KEYS[4], tonumber(ARGV[6]))
    if not epoch then
      epoch = int(now) .. ':' .. ARGV[12]
      redis.call('HSET', KEYS[4], '\0since', epoch)
    end
    if mark then redis.call('SET', mark, epoch, 'PX', tonumber(ARGV[14])) end
  end
  if refresh then redis.call('PEXPIRE', mark, tonumber(ARGV[14])) end
  if lease then index_add(KEYS[2], KEYS[3], now + lease, now) end
  return take_probe()
end)
if not ok then
  -- Each undo on its own: one the ACL denies too leaves the others done, and the error is the first.
  if counted then
    redis.pcall('HINCRBY', KEYS[4], ARGV[4], -1)
    if mark then redis.pcall('DEL', mark) end
  end
  if lease then redis.pcall('DEL', KEYS[3]) end
  error(probe)
end
if not lease then
  return begin_reply({count, failed, left, since, wait, run, probe}, '', '')
end
return begin_reply({count, failed, left, since, wait, run, probe}, 'claimed', '')
