local member, mode = ARGV[1], ARGV[2]
if #KEYS ~= 2 or #ARGV ~= 2 or (mode ~= 'keep' and mode ~= 'at_minimum') then
  return redis.error_reply('ERR keyroute restore: needs KEYS pool, side and ARGV member, mode (keep or at_minimum)')
end
if member == '' then return redis.error_reply('ERR keyroute restore: pool members must not be empty') end
--#include key_types(zset, hash)
local live = redis.call('ZSCORE', KEYS[1], member)
if live then
  redis.call('HDEL', KEYS[2], member)
  return tonumber(live)
end
local count = nil
if mode == 'keep' then count = tonumber(redis.call('HGET', KEYS[2], member)) end
if not count then count = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]) or 0 end
redis.call('ZADD', KEYS[1], count, member)
redis.call('HDEL', KEYS[2], member)
return count
