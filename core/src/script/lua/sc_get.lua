local k, owner, stale, a5 = KEYS[1], ARGV[2], ARGV[4], ARGV[5]
local lease, xe = tonumber(ARGV[1]), tonumber(ARGV[3])
local now = a5 ~= nil and a5 ~= '' and tonumber(a5)
if #KEYS ~= 1 or #ARGV < 4 or #ARGV > 5 or not lease or lease ~= math.floor(lease) or lease < 1 or lease > 281474976710656 or #owner > 256 or not xe or not (xe >= 0 and xe <= 1000000) or (stale ~= '0' and stale ~= '1') or (a5 and a5 ~= '' and not (now and now == math.floor(now) and now >= 0 and now <= 281474976710656)) or not string.find(k, '^kr:{c:[^{}]+}:e:[^{}]+$') then
  return redis.error_reply('ERR keyroute sc-get: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV lease_ms (1..2^48), owner (at most 256 bytes), xfetch_e (0..1e6, 0 = off), allow_stale (0 or 1)[, now_ms]')
end
-- The hit path reads five fields; the rest only when a lease may be granted.
local h = redis.pcall('HMGET', k, 'v', 'ver', 'sx', 'd', 'hx')
if h.err then
  return redis.error_reply('WRONGTYPE keyroute sc-get: ' .. k .. ' does not hold a hash; nothing was changed')
end
if not now then
  local tm = redis.call('TIME')
  now = tm[1] * 1000 + math.floor(tm[2] / 1000)
end
local hx = tonumber(h[5] or 0)
if h[5] and hx <= now then redis.call('DEL', k); h = {}; hx = 0 end
local v, ver, sx = h[1], tonumber(h[2] or 0), tonumber(h[3] or 0)
if v and now < sx then
  local d = tonumber(h[4] or 0)
  if xe == 0 or d == 0 or now + d * xe < sx then return {1, v, ver} end
end
local m = redis.call('HMGET', k, 'st', 'lx', 'f', 'e', 'em', 'ex')
local lx, f, ex = tonumber(m[2] or 0), tonumber(m[3] or 0), tonumber(m[6] or 0)
local leased = m[1] == 'u' and lx > now
local takeover = (m[1] == 'u' and not leased) and 1 or 0
local err = m[4] and ex > now
local r = 4
if v then
  if now < sx then
    -- An XFetch early refresh, unless someone is loading or a failure is cached.
    if leased or err then return {1, v, ver} end
    r = 2
  elseif leased then
    if stale == '1' then return {3, v, ver} end
    return {5, lx - now, f}
  elseif err then
    if stale == '1' then return {3, v, ver} end
    return {6, m[4], m[5] or '', ex - now}
  elseif stale == '1' then
    r = 2
  end
elseif leased then
  return {5, lx - now, f}
elseif err then
  return {6, m[4], m[5] or '', ex - now}
end
local nf, nhx = math.max(f + 1, now), math.max(hx, now + 2 * lease)
redis.call('HSET', k, 'st', 'u', 'lx', string.format('%d', now + lease), 'f', string.format('%d', nf), 'lo', owner, 'hx', string.format('%d', nhx))
redis.call('PEXPIREAT', k, string.format('%d', nhx))
if r == 2 then return {2, v, ver, nf, takeover} end
return {4, nf, takeover}
