local k, client = KEYS[1], ARGV[1]
local ttl = type(ARGV[2]) == 'string' and string.find(ARGV[2], '^%d+$') and #ARGV[2] <= 15 and tonumber(ARGV[2])
if #KEYS ~= 1 or #ARGV ~= 2 or not string.find(k, '^kr:{d:[^{}]+}$') or client == '' or #client > 512 or not ttl or ttl < 1 or ttl > 281474976710656 then
  return redis.error_reply('ERR keyroute device-bind: needs KEYS device (kr:{d:<device>}) and ARGV client id (1..512 bytes), ttl_ms (1..2^48)')
end
--#include key_type(k, string)
redis.call('SET', k, client, 'PX', ARGV[2])
return 1
