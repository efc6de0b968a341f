local k, val, notify, now = KEYS[1], ARGV[1], ARGV[4], ARGV[5]
--#include ms
local soft, hard = ms(ARGV[2]), ms(ARGV[3])
local pre = string.match(k, '^(kr:{c:[^{}]+}):e:[^{}]+$')
if #KEYS ~= 1 or #ARGV < 4 or #ARGV > 5 or not val or not soft or soft < 1 or not hard or hard < 1 or (notify ~= '' and notify ~= 'PUBLISH' and notify ~= 'SPUBLISH') or (now and now ~= '' and not ms(now)) or not pre then
  return redis.error_reply('ERR keyroute sc-put: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV value, soft_ttl_ms, hard_ttl_ms (1..2^48), notify (PUBLISH, SPUBLISH or empty)[, now_ms]')
end
--#include key_type(k, hash)
--#include now_optional
--#include digits
local h = redis.call('HMGET', k, 'ver', 'f', 'hx')
if h[3] and tonumber(h[3]) <= now then h = {} end
local ver, nf = tonumber(h[1] or 0) + 1, math.max(tonumber(h[2] or 0) + 1, now)
redis.call('DEL', k)
redis.call('HSET', k, 'v', val, 'ver', s(ver), 'sx', s(now + soft), 'd', '0', 'st', 'i', 'f', s(nf), 'hx', s(now + hard))
redis.call('PEXPIREAT', k, s(now + hard))
if notify ~= '' then redis.call(notify, pre .. ':n', k) end
return {ver, nf}
