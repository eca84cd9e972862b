-- Helpers shared by the session scripts; prepended to each of them when they are defined.

-- Server time in milliseconds (scripts are replicated by effects, so TIME is allowed).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Server time in microseconds: what orders a session's end (end-session.lua) against its turns'
-- begins (begin-attempt.lua), finer than ms so that an end and a begin just after it do not tie.
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function int(n)
  return string.format('%.0f', n)
end

-- A script's reply as one text: the integers `numbers`, then (when given) `state` and the rest
-- `text` (any characters), joined by ','. One bulk string costs the client a fraction of what
-- decoding an array of integers and strings does (packed-reply.ts reads it).
local function packed_reply(numbers, state, text)
  local parts = {}
  for i = 1, #numbers do parts[i] = int(numbers[i]) end
  if state then
    parts[#parts + 1] = state
    parts[#parts + 1] = text
  end
  return table.concat(parts, ',')
end

-- Makes `key` live at least ends `at` (epoch ms).
local function extend_expiry(key, at, now)
  local pttl = redis.call('PTTL', key)
  if pttl < 0 or now + pttl < at then
    redis.call('PEXPIREAT', key, int(at))
  end
end

-- Records `member` in a session index scored by its expiry, forgetting expired names first.
local function index_add(index, member, expires_at, now)
  redis.call('ZREMRANGEBYSCORE', index, '-inf', int(now))
  redis.call('ZADD', index, int(expires_at), member)
  extend_expiry(index, expires_at, now)
end

-- Deletes the members of an index beyond `max`, those that expire first; with `keep_claims`,
-- never an idempotency record still in progress (value 'P...': its tool may be running, and an
-- identical call must find it), so the index may stay past `max` by the claims running. Never
-- `written` either, the member just written: with a shorter TTL than the others it expires first,
-- and a completion lost at once let its call's retry run the side effect again (a spill, its handle
-- named a text ReadResult could not find).
local function index_cap(index, max, keep_claims, written)
  local excess = redis.call('ZCARD', index) - max
  local kept = 0
  while excess > 0 do
    local victims = redis.call('ZRANGE', index, kept, kept + excess - 1)
    if #victims == 0 then return end
    for i = 1, #victims do
      -- The first byte only, as end-session.lua: a completed record may hold megabytes.
      if victims[i] == written or (keep_claims and redis.call('GETRANGE', victims[i], 0, 0) == 'P') then
        kept = kept + 1
      else
        redis.call('DEL', victims[i])
        redis.call('ZREM', index, victims[i])
        excess = excess - 1
      end
    end
  end
end

-- A window entry of `op` (its first `len` characters): flag, result hash, when it was recorded
-- (nil: an entry of an older version, without times), when the wait it told ends (0: none) and
-- whether it is a retry's within one call (its end written '+' .. ends: it adds nothing to
-- toldRun; an older version's tonumber reads the same end, so its replicas keep the wait during a
-- rolling upgrade; a trailing '/r', written for a while before, is read as a retry's too).
-- A malformed time reads as 0 (long ago), never as an error.
local function window_entry(entry, len)
  local flag = string.sub(entry, len + 1, len + 1)
  local h = string.sub(entry, len + 2)
  local cut = string.find(h, '@', 1, true)
  if not cut then return flag, h, nil, 0, false end
  local times = string.sub(h, cut + 1)
  h = string.sub(h, 1, cut - 1)
  local slash = string.find(times, '/', 1, true)
  if not slash then return flag, h, tonumber(times) or 0, 0, false end
  local ends = string.sub(times, slash + 1)
  local retry = string.sub(ends, 1, 1) == '+'
  if string.sub(ends, -2) == '/r' then
    ends = string.sub(ends, 1, -3)
    retry = true
  end
  return flag, h, tonumber(string.sub(times, 1, slash - 1)) or 0, tonumber(ends) or 0, retry
end

-- When the newest entry of the window that has times was recorded (0: none has): the time taken
-- for an entry of an older version, which was written during a rolling upgrade, after it or not
-- long before (0, long ago, let an old replica's newest failure unblock its call at once).
local function newest_time(entries)
  for i = 1, #entries do
    local cut = string.find(entries[i], '@', 1, true)
    if cut then
      local t = tonumber(string.match(entries[i], '^%d+', cut + 1))
      if t then return t end
    end
  end
  return 0
end

-- The streak of `op` at `now` in a window stored newest first, each entry
-- `op .. flag .. hash .. '@' .. at .. '/' .. ends` (ends after a '+' for a retry's within one
-- call, which continues the run of entries that told a wait without adding to it) with ops of one fixed length: flag 0 a
-- success, 1 a failure, 2 a failure that does not count (skipped: it neither adds to the streak
-- nor breaks it), 3 a refusal before the call's store step (a failure that has no age, so it arms
-- no block: LoopStreak.refused); at, when it was recorded; ends, when the wait it told ends (0: none). An entry
-- of an older version stops at its hash: it told no wait and was recorded when the window's
-- newest entry with times was (newest_time). Exactly streakOf in loop-window.ts.
-- Returns count, failed (0|1|3: the newest counted entry's flag), the newest counted failure's age in ms (-1 when the streak is no
-- failure's), the ms left of the wait the op's newest entry told (0: none) and how many of the
-- op's newest entries in a row told a wait with the same hash (toldRun), and when the newest
-- counted entry was recorded (0: none; the probe of a block is held for that failure's streak).
local function streak_of(window, op, now)
  local entries = redis.call('LRANGE', window, 0, -1)
  local len = #op
  local count, hash, failed, at, ends = 0, nil, 0, 0, nil
  local run, run_hash, run_open = 0, nil, true
  for i = 1, #entries do
    local entry = entries[i]
    if string.sub(entry, 1, len) == op then
      local flag, h, e_at, e_ends, e_retry = window_entry(entry, len)
      if ends == nil then ends = e_ends end
      if run_open and e_ends > 0 and (run_hash == nil or run_hash == h) then
        run_hash = h
        if not e_retry then run = run + 1 end
      else
        run_open = false
      end
      if flag ~= '2' then
        if hash == nil then
          hash = h
          failed = tonumber(flag)
          at = e_at or newest_time(entries)
        elseif h ~= hash then
          break
        end
        count = count + 1
      end
    end
  end
  local since = -1
  if failed == 1 and count > 0 then since = math.max(0, now - at) end
  local wait = 0
  if ends ~= nil and ends > now then wait = ends - now end
  return count, failed, since, wait, run, at
end
