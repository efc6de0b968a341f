local id, now = ARGV[1], ARGV[2]
if #KEYS ~= 4 or #ARGV ~= 2 or not string.find(id, '^%d+$') or (now ~= '' and not string.find(now, '^%d+$')) then
  return redis.error_reply('ERR keyroute lease-release: needs KEYS in-flight, leases, lease-members, lease-seq and ARGV lease id, now_ms (digits, or empty for the server TIME)')
end
--#include key_types(zset, zset, hash, string)
--#include now_or_empty
local deadline = redis.call('ZSCORE', KEYS[2], id)
if not deadline then return 0 end
local member = redis.call('HGET', KEYS[3], id)
redis.call('ZREM', KEYS[2], id)
redis.call('HDEL', KEYS[3], id)
if member then
  local n = tonumber(redis.call('ZSCORE', KEYS[1], member))
  if n and n > 0 then redis.call('ZINCRBY', KEYS[1], -1, member) end
end
if now >= tonumber(deadline) then return 2 end
return 1
