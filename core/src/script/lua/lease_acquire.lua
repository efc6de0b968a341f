local ttl, now = ARGV[1], ARGV[2]
if #KEYS ~= 4 or #ARGV ~= 2 or not string.find(ttl, '^%d+$') or tonumber(ttl) < 1 or tonumber(ttl) > 9007199254740992 or (now ~= '' and not string.find(now, '^%d+$')) then
  return redis.error_reply('ERR keyroute lease-acquire: needs KEYS in-flight, leases, lease-members, lease-seq and ARGV ttl_ms (integer >= 1), now_ms (digits, or empty for the server TIME)')
end
--#include key_types(zset, zset, hash, string)
--#include now_or_empty
local chosen = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if not chosen then return nil end
local id = redis.call('INCR', KEYS[4])
local deadline = now + tonumber(ttl)
redis.call('ZINCRBY', KEYS[1], 1, chosen)
redis.call('ZADD', KEYS[2], deadline, id)
redis.call('HSET', KEYS[3], id, chosen)
return {chosen, id, deadline}
