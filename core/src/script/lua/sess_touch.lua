local sk, ik, sid, check, ver, now = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4]
--#include ms
local tok, r = string.match(sid or '', '^([a-z2-7]+)%.([a-z2-7]+)$')
if #KEYS ~= 2 or #ARGV < 3 or #ARGV > 4 or not tok or sk ~= 'kr:{c:' .. tok .. '}:s:' .. r or ik ~= 'kr:{c:' .. tok .. '}:sidx' or (check ~= '0' and check ~= '1') or #ver > 128 or (now and now ~= '' and not ms(now)) then
  return redis.error_reply('ERR keyroute sess-touch: needs KEYS session (kr:{c:T}:s:R), index (kr:{c:T}:sidx) and ARGV session id (T.R), check_version (0 or 1), version (at most 128 bytes)[, now_ms]')
end
--#include key_types(hash, zset)
--#include now_optional
--#include digits
--#include session_tidy
local h = redis.call('HMGET', sk, 'c', 'ver', 'd', 'x', 'ttl', 'ma', 'ca')
--#include session_gone(not h[4] or tonumber(h[4]) <= now)
if check == '1' and h[2] ~= ver then return {2, h[2]} end
--#include session_slide(h[5], h[6], h[7])
redis.call('HSET', sk, 'x', s(x))
redis.call('PEXPIREAT', sk, s(x))
redis.call('ZADD', ik, s(x), sid)
tidy()
return {1, h[1], h[3], x, h[2]}
