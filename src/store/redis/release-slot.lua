-- Gives back one of a tool's concurrency slots shared by every replica, and tells the replicas
-- whose calls wait for one (take-slot.lua takes them).
-- KEYS[1]: the tool's slot set; ARGV[1]: the lease id; ARGV[2]: the channel waiting replicas hear.
-- Returns 1 when the lease was held (and the waiters told), 0 when it had already run out.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('PUBLISH', ARGV[2], '')
return 1
