local sk, ik, sid, client, ver, data, now = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[6], ARGV[7]
--#include ms
local ttl, ma = ms(ARGV[4]), ms(ARGV[5])
local tok, r = string.match(sid or '', '^([a-z2-7]+)%.([a-z2-7]+)$')
if #KEYS ~= 2 or #ARGV < 6 or #ARGV > 7 or not tok or sk ~= 'kr:{c:' .. tok .. '}:s:' .. r or ik ~= 'kr:{c:' .. tok .. '}:sidx' or client == '' or #client > 512 or #ver > 128 or not ttl or ttl < 1 or not ma or (now and now ~= '' and not ms(now)) then
  return redis.error_reply('ERR keyroute sess-create: needs KEYS session (kr:{c:T}:s:R), index (kr:{c:T}:sidx) and ARGV session id (T.R), client id (1..512 bytes), version (at most 128 bytes), ttl_ms (1..2^48), max_age_ms (0 = none), data[, now_ms]')
end
--#include key_types(hash, zset)
--#include now_optional
--#include digits
local old = redis.call('HGET', sk, 'x')
if old and tonumber(old) > now then return {0} end
redis.call('DEL', sk)
local x = now + ttl
if ma > 0 and now + ma < x then x = now + ma end
redis.call('HSET', sk, 'c', client, 'ver', ver, 'd', data, 'ca', s(now), 'ttl', s(ttl), 'ma', s(ma), 'x', s(x))
redis.call('PEXPIREAT', sk, s(x))
redis.call('ZADD', ik, s(x), sid)
redis.call('ZREMRANGEBYSCORE', ik, '-inf', s(now))
local top = redis.call('ZRANGE', ik, -1, -1, 'WITHSCORES')
if top[2] then redis.call('PEXPIREAT', ik, top[2]) end
return {1, x}
