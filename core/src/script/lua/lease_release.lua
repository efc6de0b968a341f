local id, now = ARGV[1], ARGV[2]
if #KEYS ~= 4 or #ARGV ~= 2 or not string.find(id, '^%d+$') or (now ~= '' and not string.find(now, '^%d+$')) then
  return redis.error_reply('ERR keyroute lease-release: needs KEYS in-flight, leases, lease-members, lease-seq and ARGV lease id, now_ms (digits, or empty for the server TIME)')
end
--#include key_types(zset, zset, hash, string)
--#include now_or_empty
local deadline = redis.call('ZSCORE', KEYS[2], id)
if not deadline then return 0 end
--#include end_lease(id)
if now >= tonumber(deadline) then return 2 end
return 1
