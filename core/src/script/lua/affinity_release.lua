local item = ARGV[1]
if #KEYS ~= 2 or #ARGV ~= 1 or item == '' then
  return redis.error_reply('ERR keyroute affinity-release: needs KEYS affinity, loads and ARGV item (not empty)')
end
--#include key_types(hash, hash)
local held = redis.call('HGET', KEYS[1], item)
if not held then return nil end
if redis.call('HINCRBY', KEYS[2], held, -1) <= 0 then
  redis.call('HDEL', KEYS[2], held)
end
redis.call('HDEL', KEYS[1], item)
return held
