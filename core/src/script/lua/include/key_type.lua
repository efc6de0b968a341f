local t = redis.call('TYPE', ${1}).ok
if t ~= 'none' and t ~= '${2}' then
  return redis.error_reply('WRONGTYPE keyroute ${name}: ' .. ${1} .. ' holds a ' .. t .. ', not a ${2}; nothing was changed')
end
