-- The approvals waiting for a tenant on any replica, the first to end first, after forgetting
-- those whose wait has ended. KEYS: see approvals-lib.lua. ARGV[1]: most returned.
-- Returns id, JSON, id, JSON, ... ('' for an id indexed without its JSON).
local now = now_ms()
prune(now)
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. int(now), '+inf', 'LIMIT', 0, tonumber(ARGV[1]))
if #ids == 0 then
  return {}
end
local shown = redis.call('HMGET', KEYS[2], unpack(ids))
local out = {}
for i, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = shown[i] or ''
end
return out
