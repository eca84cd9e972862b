-- Gives back a turn taken under a shared rate limit (take-turn.lua) whose call gave up waiting
-- for it, or that its call gave up as Redis answered: the limit's time moves back one interval,
-- but never into the past (back to empty at the most; a limit already empty has nothing to give
-- back), and only while that turn is the last one queued, the limit's time still the one it set:
-- moved back under a later turn still waiting, the next turn taken would start with that one, at
-- the same time.
-- KEYS[1]: the tool's limit. ARGV[1]: the interval between two turns (ms); ARGV[2]: the limit's
-- time the turn given back set (take-turn.lua's answer).
-- Returns 1 when the turn was given back, 0 when there was nothing to give back or it stays spent.
local stored = redis.call('GET', KEYS[1])
if stored ~= ARGV[2] then
  return 0
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local tat = tonumber(stored)
if tat <= now then
  return 0
end
local back = tat - tonumber(ARGV[1])
if back <= now then
  -- The turn given back was the only one the limit still counted: it is empty again.
  redis.call('DEL', KEYS[1])
  return 1
end
redis.call('SET', KEYS[1], string.format('%.3f', back), 'PX', math.ceil(back - now) + 1000)
return 1
