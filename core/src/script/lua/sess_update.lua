local sk, ik, sid, ver, data, now = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4]
--#include ms
local tok, r = string.match(sid or '', '^([a-z2-7]+)%.([a-z2-7]+)$')
if #KEYS ~= 2 or #ARGV < 3 or #ARGV > 4 or not tok or sk ~= 'kr:{c:' .. tok .. '}:s:' .. r or ik ~= 'kr:{c:' .. tok .. '}:sidx' or #ver > 128 or (now and now ~= '' and not ms(now)) then
  return redis.error_reply('ERR keyroute sess-update: needs KEYS session (kr:{c:T}:s:R), index (kr:{c:T}:sidx) and ARGV session id (T.R), version (at most 128 bytes), data[, now_ms]')
end
--#include key_types(hash, zset)
--#include now_optional
--#include digits
local function tidy()
  redis.call('ZREMRANGEBYSCORE', ik, '-inf', s(now))
  local top = redis.call('ZRANGE', ik, -1, -1, 'WITHSCORES')
  if top[2] then redis.call('PEXPIREAT', ik, top[2]) end
end
local h = redis.call('HMGET', sk, 'ver', 'x', 'ttl', 'ma', 'ca')
if not h[2] or tonumber(h[2]) <= now then
  redis.call('DEL', sk)
  redis.call('ZREM', ik, sid)
  tidy()
  return {0}
end
if h[1] ~= ver then return {2, h[1]} end
local x = now + tonumber(h[3])
local ma, ca = tonumber(h[4]), tonumber(h[5])
if ma > 0 and ca + ma < x then x = ca + ma end
redis.call('HSET', sk, 'd', data, 'x', s(x))
redis.call('PEXPIREAT', sk, s(x))
redis.call('ZADD', ik, s(x), sid)
tidy()
return {1, x}
