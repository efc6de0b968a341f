if ${1} then
  redis.call('DEL', sk)
  redis.call('ZREM', ik, sid)
  tidy()
  return {0}
end
