local member = redis.call('HGET', KEYS[3], ${1})
redis.call('ZREM', KEYS[2], ${1})
redis.call('HDEL', KEYS[3], ${1})
if member then
  local n = tonumber(redis.call('ZSCORE', KEYS[1], member))
  if n and n > 0 then redis.call('ZINCRBY', KEYS[1], -1, member) end
end
