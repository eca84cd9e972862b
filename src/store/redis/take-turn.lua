-- Takes the next turn under a tool's rate limit shared by every replica: GCRA, the token bucket
-- kept as one time, when the limit would be back to empty (ms, Redis's clock).
-- KEYS[1]: the tool's limit; KEYS[2]: the last time a call refused was told to come back (ms).
-- ARGV[1]: the interval between two turns (ms, may be fractional); ARGV[2]: the burst's tolerance,
-- (burst - 1) x interval (ms); ARGV[3]: the longest wait allowed (ms).
-- Returns {the wait before the turn (ms, 0: now), the limit's time this turn set} when it is taken
-- (give-turn.lua knows the turn by that time), or, when the wait it would need is longer than
-- allowed (nothing is taken then), {-1 - the wait to tell it, '', the wait it would need}. A
-- refusal reserves no turn, but calls refused together must not all be told the same next turn:
-- each is told one interval after the last time told that has not come yet, if that is later, at
-- most an hour ahead (told-turns.ts's MAX_TOLD_AHEAD_MS: past it, every call refused is told that).
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
  local at = now + wait
  local last = tonumber(redis.call('GET', KEYS[2]) or '0')
  if last > now and math.min(last + interval, now + 3600000) > at then
    at = math.min(last + interval, now + 3600000)
  end
  redis.call('SET', KEYS[2], string.format('%.3f', at), 'PX', math.ceil(at - now) + 1000)
  return {-1 - math.ceil(at - now), '', math.ceil(wait)}
end
local after = string.format('%.3f', tat + interval)
redis.call('SET', KEYS[1], after, 'PX', math.ceil(tat + interval - now) + 1000)
return {math.ceil(wait), after}
