-- Gives back one of a tool's concurrency slots shared by every replica, or a waiting call's place
-- in line when it stops waiting, and tells the replicas whose calls wait (take-slot.lua takes
-- them in the order they asked).
-- KEYS[1]: the tool's slot set; KEYS[2]: its line; KEYS[3]: when each waiting call is deemed gone.
-- ARGV[1]: the lease id; ARGV[2]: the channel waiting replicas hear.
-- Returns 1 when the lease or the place was held (and the waiters told), 0 when neither was.
local held = redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if held == 0 then
  return 0
end
redis.call('PUBLISH', ARGV[2], '')
return 1
