-- Adds one replica's sealed batch of a tenant's GetToolStats counts, once: to the all-time hash
-- (a field per tool and counter) and to the tenant's window hash, in the bucket current by Redis'
-- TIME when the batch is applied (so replicas' clocks, and a batch held through an outage, do not
-- matter). The window hash has one field per tool: its buckets, newest first, `B:c,a,v,t,r,i,b,u,e`
-- joined by `;` (B the bucket number, then the 9 counts in stats-hash.ts' order), at most ARGV[6]
-- buckets (the oldest dropped when a bucket is added; readers skip those past their window).
-- KEYS[1] the tenant's counts hash; KEYS[2] this replica's last applied sequence number for it;
-- KEYS[3] the tenant's bucket width (s): the first replica to flush sets it, every one then uses
-- it; KEYS[4] the tenant's window hash (emptied when the width is set anew).
-- ARGV[1] the batch's sequence number; ARGV[2] the hashes' TTL (s); ARGV[3] the sequence number's
-- TTL (s); ARGV[4] the fields past which a tool the hash has no `<tool>\0calls` of is left out (its
-- counts not added); ARGV[5] this replica's bucket width (s); ARGV[6] the buckets kept (the longest
-- window); then `tool, deltas` pairs, deltas the 9 counts comma-separated (8 from a replica that
-- predates `errors`, 0 errors). Returns {1, width}, or {0, width} when the batch was applied before
-- (a resend after a lost reply).
local names = {'calls', 'attempts', 'validation_failures', 'timeouts', 'retries', 'idempotent_hits', 'bounded', 'unexpected', 'errors'}
local counts = #names
local width = tonumber(redis.call('GET', KEYS[3]) or '')
if width == nil or width < 1 then
  width = tonumber(ARGV[5])
  redis.call('SET', KEYS[3], ARGV[5])
  redis.call('DEL', KEYS[4])
end
redis.call('EXPIRE', KEYS[3], ARGV[2])
local last = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) <= last then return {0, width} end
local bucket = math.floor(tonumber(redis.call('TIME')[1]) / width)
local keep = tonumber(ARGV[6])
local prefix = string.format('%d', bucket) .. ':'
local max = tonumber(ARGV[4])
for i = 7, #ARGV, 2 do
  local tool = ARGV[i]
  if redis.call('HLEN', KEYS[1]) < max or redis.call('HEXISTS', KEYS[1], tool .. '\0calls') == 1 then
    local deltas = ARGV[i + 1]
    local k = 1
    for n in string.gmatch(deltas, '[^,]+') do
      if k <= counts and n ~= '0' then redis.call('HINCRBY', KEYS[1], tool .. '\0' .. names[k], n) end
      k = k + 1
    end
    local old = redis.call('HGET', KEYS[4], tool)
    local b, packed, after
    if old then b, packed, after = string.match(old, '^(%d+):([^;]*)(.*)$') end
    if b and tonumber(b) == bucket then
      -- This bucket again: its counts plus the batch's.
      local sums = {}
      for n in string.gmatch(packed, '[^,]+') do sums[#sums + 1] = tonumber(n) end
      k = 1
      for n in string.gmatch(deltas, '[^,]+') do
        if k <= counts then sums[k] = (sums[k] or 0) + tonumber(n) end
        k = k + 1
      end
      -- Every count written, 0 for one either side left out (a replica that predates it).
      for j = 1, counts do sums[j] = string.format("%d", sums[j] or 0) end
      redis.call('HSET', KEYS[4], tool, prefix .. table.concat(sums, ',', 1, counts) .. after)
    else
      -- A new bucket: the batch's counts, then the older ones, at most ARGV[6] - 1 of them (cut by count, in C).
      local rest = old and (';' .. old) or ''
      if old and select(2, string.gsub(old, ';', ';')) >= keep - 1 then
        local at = 0
        for _ = 1, keep do at = string.find(rest, ';', at + 1, true) end
        rest = string.sub(rest, 1, at - 1)
      end
      redis.call('HSET', KEYS[4], tool, prefix .. deltas .. rest)
    end
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('EXPIRE', KEYS[4], ARGV[2]) end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
return {1, width}
