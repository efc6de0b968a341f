local k, now = KEYS[1], ARGV[3]
--#include ms
local fence, lease = ms(ARGV[1]), ms(ARGV[2])
if #KEYS ~= 1 or #ARGV < 2 or #ARGV > 3 or not fence or fence < 1 or not lease or lease < 1 or (now and now ~= '' and not ms(now)) or not string.find(k, '^kr:{c:[^{}]+}:e:[^{}]+$') then
  return redis.error_reply('ERR keyroute sc-extend: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV fence (1..2^48), lease_ms (1..2^48)[, now_ms]')
end
--#include key_type(k, hash)
--#include now_optional
--#include digits
local h = redis.call('HMGET', k, 'st', 'f', 'hx')
if h[3] and tonumber(h[3]) <= now then redis.call('DEL', k); h = {} end
if tonumber(h[2] or 0) ~= fence or h[1] ~= 'u' then return 0 end
local nhx = math.max(tonumber(h[3] or 0), now + 2 * lease)
redis.call('HSET', k, 'lx', s(now + lease), 'hx', s(nhx))
redis.call('PEXPIREAT', k, s(nhx))
return 1
