local sk, ik, sid, now, op = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
--#include ms
local tok, r = string.match(sid or '', '^([a-z2-7]+)%.([a-z2-7]+)$')
local pre = tok and ('kr:{c:' .. tok .. '}:')
local ok = #KEYS >= 2 and #ARGV >= 3 and pre and sk == pre .. 's:' .. r and ik == pre .. 'sidx' and (now == '' or ms(now))
for i = 3, #KEYS do
  if not pre or string.sub(KEYS[i], 1, #pre) ~= pre then ok = false end
end
-- The calls a session may guard, each run as a function of its own KEYS and ARGV.
local ops = {}
ops['sc-get'] = function(KEYS, ARGV)
  --#inline sc_get
end
ops['sc-read'] = function(KEYS, ARGV)
  --#inline sc_read
end
ops['sc-put'] = function(KEYS, ARGV)
  --#inline sc_put
end
ops['sc-invalidate'] = function(KEYS, ARGV)
  --#inline sc_invalidate
end
ops['warm-begin'] = function(KEYS, ARGV)
  --#inline warm_begin
end
ops['sess-create'] = function(KEYS, ARGV)
  --#inline sess_create
end
ops['sess-touch'] = function(KEYS, ARGV)
  --#inline sess_touch
end
ops['sess-update'] = function(KEYS, ARGV)
  --#inline sess_update
end
ops['sess-destroy'] = function(KEYS, ARGV)
  --#inline sess_destroy
end
ops['sess-list'] = function(KEYS, ARGV)
  --#inline sess_list
end
if not ok or not ops[op] then
  return redis.error_reply('ERR keyroute sess-guard: needs KEYS session (kr:{c:T}:s:R), index (kr:{c:T}:sidx), then the keys of the call, all of client T, and ARGV session id (T.R), now_ms or empty, the script to run (sc-get, sc-read, sc-put, sc-invalidate, warm-begin, sess-create, sess-touch, sess-update, sess-destroy or sess-list), its arguments')
end
--#include key_types(hash, zset)
--#include now_or_empty
--#include digits
--#include session_tidy
local x = tonumber(redis.call('HGET', sk, 'x') or 0)
--#include session_gone(x <= now)
local reply = ops[op]({unpack(KEYS, 3)}, {unpack(ARGV, 4)})
if type(reply) == 'table' and reply.err then return reply end
-- Slide the session (unless the script removed it).
local h = redis.call('HMGET', sk, 'ttl', 'ma', 'ca')
if not h[1] then return {1, x, reply} end
--#include session_slide(h[1], h[2], h[3])
redis.call('HSET', sk, 'x', s(x))
redis.call('PEXPIREAT', sk, s(x))
redis.call('ZADD', ik, s(x), sid)
tidy()
return {1, x, reply}
