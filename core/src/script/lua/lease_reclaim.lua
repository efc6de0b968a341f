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
  local member = redis.call('HGET', KEYS[3], id)
  redis.call('ZREM', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
  if member then
    local n = tonumber(redis.call('ZSCORE', KEYS[1], member))
    if n and n > 0 then redis.call('ZINCRBY', KEYS[1], -1, member) end
  end
  out[#out + 1] = member or ''
  out[#out + 1] = tonumber(id)
  out[#out + 1] = tonumber(expired[i + 1])
end
return out
