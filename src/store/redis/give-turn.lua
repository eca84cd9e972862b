-- Gives back a turn taken under a shared rate limit (take-turn.lua) whose call gave up waiting
-- for it: the limit's time moves back one interval, but never into the past (a limit already
-- back to empty has nothing to give back).
-- KEYS[1]: the tool's limit. ARGV[1]: the interval between two turns (ms).
-- Returns 1 when the turn was given back, 0 when there was nothing to give back.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local back = tat - tonumber(ARGV[1])
if back <= now then
  return 0
end
redis.call('SET', KEYS[1], string.format('%.3f', back), 'PX', math.ceil(back - now) + 1000)
return 1
