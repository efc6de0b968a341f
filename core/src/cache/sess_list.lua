local ik, now = KEYS[1], ARGV[1]
local function ms(s)
  if type(s) == 'string' and string.find(s, '^%d+$') and #s <= 15 and tonumber(s) <= 281474976710656 then return tonumber(s) end
end
if #KEYS ~= 1 or #ARGV > 1 or (now and now ~= '' and not ms(now)) or not string.find(ik, '^kr:{c:[a-z2-7]+}:sidx$') then
  return redis.error_reply('ERR keyroute sess-list: needs KEYS index (kr:{c:T}:sidx) and ARGV [now_ms]')
end
local t = redis.call('TYPE', ik).ok
if t ~= 'none' and t ~= 'zset' then
  return redis.error_reply('WRONGTYPE keyroute sess-list: ' .. ik .. ' holds a ' .. t .. ', not a zset')
end
if now and now ~= '' then now = ms(now) else
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
end
local r = redis.call('ZRANGEBYSCORE', ik, '(' .. string.format('%d', now), '+inf', 'WITHSCORES')
local out = {}
for i = 1, #r, 2 do
  out[#out + 1] = r[i]
  out[#out + 1] = tonumber(r[i + 1])
end
return out
