local initial, overwrite = ARGV[1], ARGV[2]
if #KEYS ~= 2 or not initial or not string.find(initial, '^%d+$') or tonumber(initial) > 9007199254740992 or (overwrite ~= '0' and overwrite ~= '1') then
  return redis.error_reply('ERR keyroute seed: needs KEYS pool, side and ARGV initial count (decimal 0..=2^53), overwrite (0 or 1), members...')
end
for i = 3, #ARGV do
  if ARGV[i] == '' then return redis.error_reply('ERR keyroute seed: pool members must not be empty') end
end
--#include key_types(zset, hash)
local n = tonumber(initial)
local added = 0
for i = 3, #ARGV do
  if overwrite == '1' then
    added = added + redis.call('ZADD', KEYS[1], n, ARGV[i])
  else
    added = added + redis.call('ZADD', KEYS[1], 'NX', n, ARGV[i])
  end
  redis.call('HDEL', KEYS[2], ARGV[i])
end
return added
