if #KEYS ~= 2 or #ARGV ~= 1 then
  return redis.error_reply('ERR keyroute remove: needs KEYS pool, side and ARGV member')
end
--#include key_types(zset, hash)
local count = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not count then return nil end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], count)
return tonumber(count)
