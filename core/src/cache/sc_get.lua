local k, a1, owner, a3, stale, a5 = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local lease = type(a1) == 'string' and #a1 <= 15 and string.find(a1, '^%d+$') and tonumber(a1)
local xe = type(a3) == 'string' and string.find(a3, '^%d+%.?%d*$') and tonumber(a3)
local now = type(a5) == 'string' and a5 ~= '' and #a5 <= 15 and string.find(a5, '^%d+$') and tonumber(a5)
if #KEYS ~= 1 or #ARGV < 4 or #ARGV > 5 or not lease or lease < 1 or lease > 281474976710656 or #owner > 256 or not xe or xe > 1000000 or (stale ~= '0' and stale ~= '1') or (a5 and a5 ~= '' and (not now or now > 281474976710656)) or not string.find(k, '^kr:{c:[^{}]+}:e:[^{}]+$') then
  return redis.error_reply('ERR keyroute sc-get: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV lease_ms (1..2^48), owner (at most 256 bytes), xfetch_e (decimal >= 0, 0 = off), allow_stale (0 or 1)[, now_ms]')
end
local h = redis.pcall('HMGET', k, 'v', 'ver', 'sx', 'd', 'st', 'lx', 'f', 'e', 'em', 'ex', 'hx')
if h.err then
  return redis.error_reply('WRONGTYPE keyroute sc-get: ' .. k .. ' does not hold a hash; nothing was changed')
end
if not now then
  local tm = redis.call('TIME')
  now = tm[1] * 1000 + math.floor(tm[2] / 1000)
end
if h[11] and tonumber(h[11]) <= now then redis.call('DEL', k); h = {} end
local v, ver, sx = h[1], tonumber(h[2] or 0), tonumber(h[3] or 0)
local lx, f, ex, hx = tonumber(h[6] or 0), tonumber(h[7] or 0), tonumber(h[10] or 0), tonumber(h[11] or 0)
local leased = h[5] == 'u' and lx > now
local takeover = (h[5] == 'u' and not leased) and 1 or 0
local err = h[8] and ex > now
local r = 4
if v then
  if now < sx then
    local d = tonumber(h[4] or 0)
    if leased or err or xe == 0 or d == 0 or now + d * xe < sx then return {1, v, ver} end
    r = 2
  elseif leased then
    if stale == '1' then return {3, v, ver} end
    return {5, lx - now, f}
  elseif err then
    if stale == '1' then return {3, v, ver} end
    return {6, h[8], h[9] or '', ex - now}
  elseif stale == '1' then
    r = 2
  end
elseif leased then
  return {5, lx - now, f}
elseif err then
  return {6, h[8], h[9] or '', ex - now}
end
local nf, nhx = math.max(f + 1, now), math.max(hx, now + 2 * lease)
redis.call('HSET', k, 'st', 'u', 'lx', string.format('%d', now + lease), 'f', string.format('%d', nf), 'lo', owner, 'hx', string.format('%d', nhx))
redis.call('PEXPIREAT', k, string.format('%d', nhx))
if r == 2 then return {2, v, ver, nf, takeover} end
return {4, nf, takeover}
