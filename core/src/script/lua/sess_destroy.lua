local sk, ik, sid, now = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
--#include ms
local tok, r = string.match(sid or '', '^([a-z2-7]+)%.([a-z2-7]+)$')
if #KEYS ~= 2 or #ARGV < 1 or #ARGV > 2 or not tok or sk ~= 'kr:{c:' .. tok .. '}:s:' .. r or ik ~= 'kr:{c:' .. tok .. '}:sidx' or (now and now ~= '' and not ms(now)) then
  return redis.error_reply('ERR keyroute sess-destroy: needs KEYS session (kr:{c:T}:s:R), index (kr:{c:T}:sidx) and ARGV session id (T.R)[, now_ms]')
end
--#include key_types(hash, zset)
--#include now_optional
--#include digits
local x = redis.call('HGET', sk, 'x')
local live = x and tonumber(x) > now
redis.call('DEL', sk)
redis.call('ZREM', ik, sid)
redis.call('ZREMRANGEBYSCORE', ik, '-inf', s(now))
local top = redis.call('ZRANGE', ik, -1, -1, 'WITHSCORES')
if top[2] then redis.call('PEXPIREAT', ik, top[2]) end
if live then return 1 end
return 0
