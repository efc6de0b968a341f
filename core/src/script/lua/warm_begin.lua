local owner, now = ARGV[2], ARGV[3]
--#include ms
local lease = ms(ARGV[1])
if #KEYS < 1 or #KEYS > 64 or #ARGV < 2 or #ARGV > 3 or not lease or lease < 1 or #owner > 256 or (now and now ~= '' and not ms(now)) then
  return redis.error_reply('ERR keyroute warm-begin: needs KEYS 1 to 64 entries of one client (kr:{c:T}:e:<kind>) and ARGV lease_ms (1..2^48), owner (at most 256 bytes)[, now_ms]')
end
local pre = string.match(KEYS[1], '^(kr:{c:[^{}]+}):e:[^{}]+$')
for i = 1, #KEYS do
  if not pre or string.match(KEYS[i], '^(kr:{c:[^{}]+}):e:[^{}]+$') ~= pre then
    return redis.error_reply('ERR keyroute warm-begin: every key must be an entry of the same client (kr:{c:T}:e:<kind>); ' .. KEYS[i] .. ' is not')
  end
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= 'none' and t ~= 'hash' then
    return redis.error_reply('WRONGTYPE keyroute warm-begin: ' .. KEYS[i] .. ' holds a ' .. t .. ', not a hash; nothing was changed')
  end
end
--#include now_optional
--#include digits
local out = {}
for i = 1, #KEYS do
  local k = KEYS[i]
  local h = redis.call('HMGET', k, 'v', 'sx', 'st', 'lx', 'f', 'e', 'ex', 'hx')
  if h[8] and tonumber(h[8]) <= now then redis.call('DEL', k); h = {} end
  local leased = h[3] == 'u' and tonumber(h[4] or 0) > now
  local err = h[6] and tonumber(h[7] or 0) > now
  local fresh = h[1] and tonumber(h[2] or 0) > now
  if fresh or leased or err then
    out[i] = 0
  else
    local nf, nhx = math.max(tonumber(h[5] or 0) + 1, now), math.max(tonumber(h[8] or 0), now + 2 * lease)
    redis.call('HSET', k, 'st', 'u', 'lx', s(now + lease), 'f', s(nf), 'lo', owner, 'hx', s(nhx))
    redis.call('PEXPIREAT', k, s(nhx))
    out[i] = nf
  end
end
return out
