-- Takes the next turn under a tool's rate limit shared by every replica: GCRA, the token bucket
-- kept as one time, when the limit would be back to empty (ms, Redis's clock).
-- KEYS[1]: the tool's limit. ARGV[1]: the interval between two turns (ms, may be fractional);
-- ARGV[2]: the burst's tolerance, (burst - 1) x interval (ms); ARGV[3]: the longest wait allowed (ms).
-- Returns {the wait before the turn (ms, 0: now), the limit's time this turn set} when it is taken
-- (give-turn.lua knows the turn by that time), or {-1 - the wait it would need, ''} when that is
-- longer than allowed (nothing is taken then).
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then
  tat = now
end
local wait = tat - tonumber(ARGV[2]) - now
if wait < 0 then
  wait = 0
end
if wait > tonumber(ARGV[3]) then
  return {-1 - math.ceil(wait), ''}
end
local after = string.format('%.3f', tat + interval)
redis.call('SET', KEYS[1], after, 'PX', math.ceil(tat + interval - now) + 1000)
return {math.ceil(wait), after}
