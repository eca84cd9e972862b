-- Helpers shared by the session scripts; prepended to each of them when they are defined.

-- Server time in milliseconds (scripts are replicated by effects, so TIME is allowed).
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function int(n)
  return string.format('%.0f', n)
end

-- Makes `key` live at least until `at` (epoch ms).
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

-- The streak of `op` in a window stored newest first, each entry `op .. failed(0|1) .. hash`
-- with ops of one fixed length: exactly streakOf in loop-window.ts. Returns count, failed.
local function streak_of(window, op)
  local entries = redis.call('LRANGE', window, 0, -1)
  local len = #op
  local count, hash, failed = 0, nil, 0
  for i = 1, #entries do
    local entry = entries[i]
    if string.sub(entry, 1, len) == op then
      local h = string.sub(entry, len + 2)
      if hash == nil then
        hash = h
        failed = tonumber(string.sub(entry, len + 1, len + 1))
      elseif h ~= hash then
        break
      end
      count = count + 1
    end
  end
  return count, failed
end
