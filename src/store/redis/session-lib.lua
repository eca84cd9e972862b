-- Helpers shared by the session scripts; prepended to each of them when they are defined.

-- Server time in milliseconds (scripts are replicated by effects, so TIME is allowed).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function int(n)
  return string.format('%.0f', n)
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
-- identical call must find it), so the index may stay past `max` by the claims running.
local function index_cap(index, max, keep_claims)
  local excess = redis.call('ZCARD', index) - max
  local kept = 0
  while excess > 0 do
    local victims = redis.call('ZRANGE', index, kept, kept + excess - 1)
    if #victims == 0 then return end
    for i = 1, #victims do
      local held = keep_claims and redis.call('GET', victims[i])
      if held and string.sub(held, 1, 1) == 'P' then
        kept = kept + 1
      else
        redis.call('DEL', victims[i])
        redis.call('ZREM', index, victims[i])
        excess = excess - 1
      end
    end
  end
end

-- The streak of `op` at `now` in a window stored newest first, each entry
-- `op .. flag .. hash .. '@' .. at .. '/' .. ends` with ops of one fixed length: flag 0 a
-- success, 1 a failure, 2 a failure that does not count (skipped: it neither adds to the streak
-- nor breaks it); at, when it was recorded; ends, when the wait it told ends (0: none). An entry
-- of an older version stops at its hash (at and ends 0). Exactly streakOf in loop-window.ts.
-- Returns count, failed (0|1), the newest counted failure's age in ms (-1 when the streak is no
-- failure's) and the ms left of the wait the op's newest entry told (0: none).
local function streak_of(window, op, now)
  local entries = redis.call('LRANGE', window, 0, -1)
  local len = #op
  local count, hash, failed, at, ends = 0, nil, 0, 0, nil
  for i = 1, #entries do
    local entry = entries[i]
    if string.sub(entry, 1, len) == op then
      local flag = string.sub(entry, len + 1, len + 1)
      local h = string.sub(entry, len + 2)
      local e_at, e_ends = 0, 0
      local cut = string.find(h, '@', 1, true)
      if cut then
        local times = string.sub(h, cut + 1)
        h = string.sub(h, 1, cut - 1)
        local slash = string.find(times, '/', 1, true)
        e_at = tonumber(string.sub(times, 1, slash - 1)) or 0
        e_ends = tonumber(string.sub(times, slash + 1)) or 0
      end
      if ends == nil then ends = e_ends end
      if flag ~= '2' then
        if hash == nil then
          hash = h
          failed = tonumber(flag)
          at = e_at
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
  return count, failed, since, wait
end
