local item, mode, value = ARGV[1], ARGV[2], ARGV[3]
local n = #ARGV - 3
if #KEYS ~= 2 or n < 1 or item == nil or item == '' or (mode ~= 'cap' and mode ~= 'c') or not string.find(value or '', '^%d+%.?%d*$') then
  return redis.error_reply('ERR keyroute affinity-take: needs KEYS affinity, loads and ARGV item (not empty), mode (cap or c), value (cap: integer >= 1; c: number >= 1), candidates... (at least one, none empty)')
end
local v = tonumber(value)
if v == nil or v < 1 or v > 9007199254740992 or (mode == 'cap' and not string.find(value, '^%d+$')) then
  return redis.error_reply('ERR keyroute affinity-take: the cap must be an integer in 1..2^53 and c a number in 1..2^53')
end
for i = 4, #ARGV do
  if ARGV[i] == '' then
    return redis.error_reply('ERR keyroute affinity-take: candidate ' .. (i - 3) .. ' is empty; nothing was changed')
  end
end
--#include key_types(hash, hash)
local cap = v
if mode == 'c' then
  cap = math.ceil(v * (redis.call('HLEN', KEYS[1]) + 1) / n)
end
local held = redis.call('HGET', KEYS[1], item)
if held then
  return {held, tonumber(redis.call('HGET', KEYS[2], held) or '0'), cap, 0}
end
for i = 4, #ARGV do
  local load = tonumber(redis.call('HGET', KEYS[2], ARGV[i]) or '0')
  if load < cap then
    local after = redis.call('HINCRBY', KEYS[2], ARGV[i], 1)
    redis.call('HSET', KEYS[1], item, ARGV[i])
    return {ARGV[i], after, cap, 1}
  end
end
return nil
