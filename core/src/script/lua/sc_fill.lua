local k, val, notify, now = KEYS[1], ARGV[2], ARGV[6], ARGV[7]
--#include ms
local fence, soft, hard, load = ms(ARGV[1]), ms(ARGV[3]), ms(ARGV[4]), ms(ARGV[5])
local pre = string.match(k, '^(kr:{c:[^{}]+}):e:[^{}]+$')
if #KEYS ~= 1 or #ARGV < 6 or #ARGV > 7 or not fence or fence < 1 or not soft or soft < 1 or not hard or hard < 1 or not load or (notify ~= '' and notify ~= 'PUBLISH' and notify ~= 'SPUBLISH') or (now and now ~= '' and not ms(now)) or not pre then
  return redis.error_reply('ERR keyroute sc-fill: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV fence (1..2^48), value, soft_ttl_ms, hard_ttl_ms (1..2^48), load_ms (0..2^48), notify (PUBLISH, SPUBLISH or empty)[, now_ms]')
end
--#include key_type(k, hash)
--#include now_optional
--#include digits
local h = redis.call('HMGET', k, 'ver', 'st', 'f', 'hx')
if h[4] and tonumber(h[4]) <= now then redis.call('DEL', k); h = {} end
local f = tonumber(h[3] or 0)
if f ~= fence then return {0, f} end
local ver = tonumber(h[1] or 0)
if h[2] ~= 'u' then return {2, ver} end
ver = ver + 1
redis.call('HDEL', k, 'lx', 'lo', 'e', 'em', 'ex')
redis.call('HSET', k, 'v', val, 'ver', s(ver), 'sx', s(now + soft), 'd', s(load), 'st', 'i', 'hx', s(now + hard))
redis.call('PEXPIREAT', k, s(now + hard))
if notify ~= '' then redis.call(notify, pre .. ':n', k) end
return {1, ver}
