local sk, ik, sid, ver, data, now = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4]
--#include ms
local tok, r = string.match(sid or '', '^([a-z2-7]+)%.([a-z2-7]+)$')
if #KEYS ~= 2 or #ARGV < 3 or #ARGV > 4 or not tok or sk ~= 'kr:{c:' .. tok .. '}:s:' .. r or ik ~= 'kr:{c:' .. tok .. '}:sidx' or #ver > 128 or (now and now ~= '' and not ms(now)) then
  return redis.error_reply('ERR keyroute sess-update: needs KEYS session (kr:{c:T}:s:R), index (kr:{c:T}:sidx) and ARGV session id (T.R), version (at most 128 bytes), data[, now_ms]')
end
--#include key_types(hash, zset)
--#include now_optional
--#include digits
--#include session_tidy
local h = redis.call('HMGET', sk, 'ver', 'x', 'ttl', 'ma', 'ca')
--#include session_gone(not h[2] or tonumber(h[2]) <= now)
if h[1] ~= ver then return {2, h[1]} end
--#include session_slide(h[3], h[4], h[5])
redis.call('HSET', sk, 'd', data, 'x', s(x))
redis.call('PEXPIREAT', sk, s(x))
redis.call('ZADD', ik, s(x), sid)
tidy()
return {1, x}
