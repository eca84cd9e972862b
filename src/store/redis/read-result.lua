-- ReadResult: a page of a spilled result, reading only the chunks it spans (finish-attempt.lua
-- writes a spill as a hash of chunks).
-- KEYS[1] the spilled result
-- ARGV[1] offset in code points, ARGV[2] limit in code points (-1: the whole text)
-- Returns false when there is no such result; {'h', length in code points, code points per chunk,
-- index of the first chunk returned, the chunks...} for a spill in chunks; {'s', text} for a
-- spill of an older version, one string (read whole: it is gone within its TTL).
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'string' then
  return {'s', redis.call('GET', KEYS[1])}
end
if kind ~= 'hash' then
  return false
end
local meta = redis.call('HMGET', KEYS[1], 'n', 'c')
local total, size = tonumber(meta[1]), tonumber(meta[2])
if not total or not size or size < 1 then
  return false
end
local offset = math.max(0, math.min(tonumber(ARGV[1]), total))
local limit = tonumber(ARGV[2])
local stop = total
if limit >= 0 then stop = math.min(total, offset + limit) end
-- An empty page (at or past the end, or a limit of 0) reads no chunk: at the end of a text of a
-- whole number of chunks the chunk after the last does not exist (it answered 'not found').
if stop <= offset then
  return {'h', total, size, 0}
end
local first = math.floor(offset / size)
local last = math.max(first, math.ceil(stop / size) - 1)
local reply = {'h', total, size, first}
-- In batches: unpack() of thousands of names would pass Lua's stack (a whole text of many chunks).
local k = first
while k <= last and total > 0 do
  local names = {}
  for i = k, math.min(last, k + 199) do names[#names + 1] = tostring(i) end
  local chunks = redis.call('HMGET', KEYS[1], unpack(names))
  for i = 1, #chunks do
    if not chunks[i] then return false end
    reply[#reply + 1] = chunks[i]
  end
  k = k + #names
end
return reply
