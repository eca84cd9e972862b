-- A session's trajectory memory, oldest first, without expired entries.
-- KEYS[1] memory list (entries `expiry ms:entry`)
local now = now_ms()
local entries = redis.call('LRANGE', KEYS[1], 0, -1)
local live = {}
for i = 1, #entries do
  local sep = string.find(entries[i], ':', 1, true)
  if tonumber(string.sub(entries[i], 1, sep - 1)) > now then
    live[#live + 1] = string.sub(entries[i], sep + 1)
  end
end
return live
