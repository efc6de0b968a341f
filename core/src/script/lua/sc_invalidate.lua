local k, notify, now = KEYS[1], ARGV[2], ARGV[3]
--#include ms
local tomb = ms(ARGV[1])
local pre = string.match(k, '^(kr:{c:[^{}]+}):e:[^{}]+$')
if #KEYS ~= 1 or #ARGV < 2 or #ARGV > 3 or not tomb or tomb < 1 or (notify ~= '' and notify ~= 'PUBLISH' and notify ~= 'SPUBLISH') or (now and now ~= '' and not ms(now)) or not pre then
  return redis.error_reply('ERR keyroute sc-invalidate: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV tombstone_ms (1..2^48), notify (PUBLISH, SPUBLISH or empty)[, now_ms]')
end
--#include key_type(k, hash)
--#include now_optional
--#include digits
local h = redis.call('HMGET', k, 'ver', 'f', 'hx')
if h[3] and tonumber(h[3]) <= now then redis.call('DEL', k); h = {} end
if redis.call('EXISTS', k) == 0 then return 0 end
local nf = math.max(tonumber(h[2] or 0) + 1, now)
redis.call('DEL', k)
redis.call('HSET', k, 'f', s(nf), 'ver', s(tonumber(h[1] or 0)), 'hx', s(now + tomb))
redis.call('PEXPIREAT', k, s(now + tomb))
if notify ~= '' then redis.call(notify, pre .. ':n', k) end
return 1
