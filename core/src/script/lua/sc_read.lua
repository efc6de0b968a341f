local k, now = KEYS[1], ARGV[1]
--#include ms
if #KEYS ~= 1 or #ARGV > 1 or (now and now ~= '' and not ms(now)) or not string.find(k, '^kr:{c:[^{}]+}:e:[^{}]+$') then
  return redis.error_reply('ERR keyroute sc-read: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV [now_ms]')
end
--#include key_type(k, hash)
--#include now_optional
local h = redis.call('HMGET', k, 'v', 'hx')
if not h[1] or (h[2] and tonumber(h[2]) <= now) then return false end
return h[1]
