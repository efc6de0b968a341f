local now, limit = ARGV[1], ARGV[2]
if #KEYS ~= 4 or #ARGV ~= 2 or (now ~= '' and not string.find(now, '^%d+$')) or not string.find(limit, '^%d+$') or tonumber(limit) < 1 then
  return redis.error_reply('ERR keyroute lease-reclaim: needs KEYS in-flight, leases, lease-members, lease-seq and ARGV now_ms (digits, or empty for the server TIME), limit (integer >= 1)')
end
--#include key_types(zset, zset, hash, string)
--#include now_or_empty
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES', 'LIMIT', 0, tonumber(limit))
local out = {}
for i = 1, #expired, 2 do
  local id = expired[i]
  --#include end_lease(id)
  out[#out + 1] = member or ''
  out[#out + 1] = tonumber(id)
  out[#out + 1] = tonumber(expired[i + 1])
end
return out
