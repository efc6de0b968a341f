local function tidy()
  redis.call('ZREMRANGEBYSCORE', ik, '-inf', s(now))
  local top = redis.call('ZRANGE', ik, -1, -1, 'WITHSCORES')
  if top[2] then redis.call('PEXPIREAT', ik, top[2]) end
end
