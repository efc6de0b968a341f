local k, code, msg, notify, now = KEYS[1], ARGV[2], ARGV[3], ARGV[5], ARGV[6]
--#include ms
local fence, neg = ms(ARGV[1]), ms(ARGV[4])
local pre = string.match(k, '^(kr:{c:[^{}]+}):e:[^{}]+$')
if #KEYS ~= 1 or #ARGV < 5 or #ARGV > 6 or not fence or fence < 1 or code == '' or #code > 64 or #msg > 1024 or not neg or (notify ~= '' and notify ~= 'PUBLISH' and notify ~= 'SPUBLISH') or (now and now ~= '' and not ms(now)) or not pre then
  return redis.error_reply('ERR keyroute sc-abandon: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV fence (1..2^48), error code (1..64 bytes), message (at most 1024 bytes), neg_ttl_ms (0..2^48), notify (PUBLISH, SPUBLISH or empty)[, now_ms]')
end
--#include key_type(k, hash)
--#include now_optional
--#include digits
local h = redis.call('HMGET', k, 'st', 'f', 'hx')
if h[3] and tonumber(h[3]) <= now then redis.call('DEL', k); h = {} end
if tonumber(h[2] or 0) ~= fence or h[1] ~= 'u' then return 0 end
local nhx = math.max(tonumber(h[3] or 0), now + neg)
redis.call('HDEL', k, 'lx', 'lo')
redis.call('HSET', k, 'st', 'i', 'e', code, 'em', msg, 'ex', s(now + neg), 'hx', s(nhx))
redis.call('PEXPIREAT', k, s(nhx))
if notify ~= '' then redis.call(notify, pre .. ':n', k) end
return 1
