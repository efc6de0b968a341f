for i, want in ipairs({${types}}) do
  local t = redis.call('TYPE', KEYS[i]).ok
  if t ~= 'none' and t ~= want then
    return redis.error_reply('WRONGTYPE keyroute ${name}: ' .. KEYS[i] .. ' holds a ' .. t .. ', not a ' .. want .. '; nothing was changed')
  end
end
