-- The second store step of an attempt, every write at once: the loop record, the idempotency
-- record (complete, unknown or release), the spilled result and the trajectory memory entry.
-- KEYS[1] loop window, KEYS[2] memory, KEYS[3] record index, KEYS[4] result index,
-- KEYS[5] idempotency record, KEYS[6] spilled result, KEYS[7] the op's loop-block probe (KEYS[1] when unused),
-- KEYS[8] the session's end mark (end-session.lua: when it was last ended, Redis's TIME in µs)
-- ARGV[1] op, ARGV[2] window entry suffix: flag (0 a success, 1 a failure, 2 a failure that does
-- not count, 3 a refusal before the call's store step) .. result hash ('' when nothing ran), stored with '@' .. now .. '/' .. the end of the
-- wait it told (session-lib.lua, streak_of),
-- ARGV[3] window size, ARGV[4] window TTL s, ARGV[5] idempotency action ('', complete, unknown,
-- release, late: a completion written only over its owner's own UNKNOWN mark, the answer its tool
-- gave after the attempt's timeout), ARGV[6] stored result JSON (complete, late) or the claim's
-- owner (release; '' for any owner), ARGV[7] record TTL s, ARGV[8] max records,
-- ARGV[9] spill TTL s ('' when none), ARGV[10] the spilled text's length in code points,
-- ARGV[11] max results,
-- ARGV[12] memory TTL s ('' when none), ARGV[13] memory entry, ARGV[14] max memory entries,
-- ARGV[15] the share of maxmemory spills may fill, ARGV[16] the stored result JSON without its
-- handle, written instead of ARGV[6] when the spill is refused ('' when there is none),
-- ARGV[17] code points per chunk of the spill, ARGV[18] the wait the record told the model in ms
-- ('' when none; with a trailing 'r' when the record is a retry's within one call, see streak_of),
-- ARGV[19] the holder of the op's probe this attempt took and did not use ('' when none): the
-- probe is freed while it is still that holder's (begin-attempt.lua writes 'until:at:holder'),
-- ARGV[20] the claim's owner for a completion or UNKNOWN mark ('' for any: written whatever the
-- key holds), kept in the UNKNOWN mark ('U' .. owner), ARGV[21] when the call's turn began
-- (begin-attempt.lua's TIME in µs; '' when it began none: taken as now), ARGV[22..] the spill's chunks, in order
-- A session ended (EndSession) since the call's turn began gets only its idempotency record back
-- (a retry is replayed, not run again; without the spill's handle): no loop record, spill or memory
-- entry, as EndSession cleared them (DESIGN section 11).
-- A spill is a hash: `n` its length in code points, `c` the code points per chunk, and fields
-- 0, 1, ... its chunks, so that ReadResult reads a page's chunks, not the whole text
-- (read-result.lua).
-- Returns one text (packed_reply): streak count, streak failed (0|1|3), spill refused (0: kept or
-- none, 1: no room, 2: INFO refused, 3: the session ended since the turn began), streak age in ms (-1: no failure's), wait left in ms,
-- toldRun of the op after the record, and 1 when the completion or UNKNOWN mark was kept out
-- (another attempt's claim or record holds the key: this one's lease lapsed first), else 0.

-- Why a spill of `bytes` is refused, 0 when it is not: 1 when it would take this node's
-- used_memory past `share` of its maxmemory (the rest is for idempotency claims and records,
-- which noeviction never drops), 2 when INFO is refused (an ACL without it: no room is known).
-- Nothing is checked on a node without maxmemory.
local function spill_refusal(bytes, share)
  local info = redis.pcall('INFO', 'memory')
  if type(info) ~= 'string' then return 2 end
  local max = tonumber(string.match(info, '\nmaxmemory:(%d+)') or '0')
  if max == 0 then return 0 end
  local used = tonumber(string.match(info, '\nused_memory:(%d+)') or '0')
  if used + bytes > max * share then return 1 end
  return 0
end

local refused = 0
local kept_out = 0
local ended = false
if ARGV[21] ~= '' and (ARGV[2] ~= '' or ARGV[9] ~= '' or ARGV[12] ~= '') then
  local mark = redis.call('GET', KEYS[8])
  ended = mark ~= false and tonumber(mark) ~= nil and tonumber(mark) >= tonumber(ARGV[21])
end
if ARGV[9] ~= '' and ended then
  refused = 3
elseif ARGV[9] ~= '' then
  local bytes = 0
  for i = 22, #ARGV do bytes = bytes + #ARGV[i] end
  refused = spill_refusal(bytes, tonumber(ARGV[15]))
end
local now = now_ms()
if ARGV[2] ~= '' and not ended then
  local ends = '0'
  if string.sub(ARGV[18], -1) == 'r' then
    -- A retry's: '+' before its end, which a replica of an older version reads as the same number
    -- (Lua's tonumber takes a sign), so that the wait it told holds on every replica of an upgrade.
    ends = '+' .. int(now + tonumber(string.sub(ARGV[18], 1, -2)))
  elseif ARGV[18] ~= '' then
    ends = int(now + tonumber(ARGV[18]))
  end
  redis.call('LPUSH', KEYS[1], ARGV[1] .. ARGV[2] .. '@' .. int(now) .. '/' .. ends)
  redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[3]) - 1)
  redis.call('PEXPIRE', KEYS[1], int(tonumber(ARGV[4]) * 1000))
end
if ARGV[19] ~= '' then
  local held = redis.call('GET', KEYS[7])
  if held and string.sub(held, -#ARGV[19] - 1) == ':' .. ARGV[19] then
    redis.call('DEL', KEYS[7])
  end
end
local action = ARGV[5]
if action == 'release' then
  -- Only a claim still in progress, and with an owner only that claim: a late release never
  -- deletes a later claim or a result.
  local held = redis.call('GET', KEYS[5])
  if held and string.sub(held, 1, 1) == 'P' and (ARGV[6] == '' or held == 'P' .. ARGV[6]) then
    redis.call('DEL', KEYS[5])
    redis.call('ZREM', KEYS[3], KEYS[5])
  end
elseif action ~= '' then
  -- Over this attempt's claim, or where nothing is (its lease lapsed, nobody claimed since); never
  -- over another attempt's claim or record, which ran the call since (or runs it).
  local held = ARGV[20] ~= '' and redis.call('GET', KEYS[5])
  local value = 'U' .. ARGV[20]
  if action ~= 'unknown' then
    value = 'C' .. ((refused ~= 0 and ARGV[16] ~= '') and ARGV[16] or ARGV[6])
  end
  if held and (held == value or action ~= 'unknown' and (held == 'C' .. ARGV[6] or held == 'C' .. ARGV[16])) then
    -- This attempt's own record, written by an earlier send of this step whose reply was lost (a
    -- timeout while Redis stalled): nothing to write, and nothing was kept out. Before, it was
    -- told as another attempt's, "the call may have run twice", when it ran once.
  elseif action == 'late' and held ~= 'U' .. ARGV[20] or action ~= 'late' and held and held ~= 'P' .. ARGV[20] then
    kept_out = 1
  else
    local ttl = tonumber(ARGV[7]) * 1000
    redis.call('SET', KEYS[5], value, 'PX', int(ttl))
    index_add(KEYS[3], KEYS[5], now + ttl, now)
    index_cap(KEYS[3], tonumber(ARGV[8]), true, KEYS[5])
  end
end
if ARGV[9] ~= '' and refused == 0 then
  local ttl = tonumber(ARGV[9]) * 1000
  redis.call('DEL', KEYS[6])
  redis.call('HSET', KEYS[6], 'n', ARGV[10], 'c', ARGV[17])
  -- In batches: unpack() of thousands of values would pass Lua's stack.
  local fields = {}
  for i = 22, #ARGV do
    fields[#fields + 1] = tostring(i - 22)
    fields[#fields + 1] = ARGV[i]
    if #fields >= 200 or i == #ARGV then
      redis.call('HSET', KEYS[6], unpack(fields))
      fields = {}
    end
  end
  redis.call('PEXPIRE', KEYS[6], int(ttl))
  index_add(KEYS[4], KEYS[6], now + ttl, now)
  index_cap(KEYS[4], tonumber(ARGV[11]), false, KEYS[6])
end
if ARGV[12] ~= '' and not ended then
  local expires = now + tonumber(ARGV[12]) * 1000
  -- Expired entries go from the old end (entries are in time order), not only hidden on read.
  while true do
    local head = redis.call('LINDEX', KEYS[2], 0)
    if not head or (tonumber(string.match(head, '^%d+')) or 0) > now then break end
    redis.call('LPOP', KEYS[2])
  end
  redis.call('RPUSH', KEYS[2], int(expires) .. ':' .. ARGV[13])
  redis.call('LTRIM', KEYS[2], -tonumber(ARGV[14]), -1)
  extend_expiry(KEYS[2], expires, now)
end
local count, failed, since, wait, run = streak_of(KEYS[1], ARGV[1], now)
return packed_reply({count, failed, refused, since, wait, run, kept_out})
