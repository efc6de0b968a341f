local ik, now = KEYS[1], ARGV[1]
--#include ms
if #KEYS ~= 1 or #ARGV > 1 or (now and now ~= '' and not ms(now)) or not string.find(ik, '^kr:{c:[a-z2-7]+}:sidx$') then
  return redis.error_reply('ERR keyroute sess-list: needs KEYS index (kr:{c:T}:sidx) and ARGV [now_ms]')
end
local t = redis.call('TYPE', ik).ok
if t ~= 'none' and t ~= 'zset' then
  return redis.error_reply('WRONGTYPE keyroute sess-list: ' .. ik .. ' holds a ' .. t .. ', not a zset')
end
--#include now_optional
local r = redis.call('ZRANGEBYSCORE', ik, '(' .. string.format('%d', now), '+inf', 'WITHSCORES')
local out = {}
for i = 1, #r, 2 do
  out[#out + 1] = r[i]
  out[#out + 1] = tonumber(r[i + 1])
end
return out
