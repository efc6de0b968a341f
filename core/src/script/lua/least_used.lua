local chosen = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
if not chosen then return nil end
redis.call('ZINCRBY', KEYS[1], 1, chosen)
return chosen
