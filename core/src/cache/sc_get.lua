local k, owner, stale, now = KEYS[1], ARGV[2], ARGV[4], ARGV[5]
local function ms(s)
  if type(s) == 'string' and string.find(s, '^%d+$') and #s <= 15 and tonumber(s) <= 281474976710656 then return tonumber(s) end
end
local lease = ms(ARGV[1])
local xe = type(ARGV[3]) == 'string' and string.find(ARGV[3], '^%d+%.?%d*$') and tonumber(ARGV[3])
if #KEYS ~= 1 or #ARGV < 4 or #ARGV > 5 or not lease or lease < 1 or #owner > 256 or not xe or xe > 1000000 or (stale ~= '0' and stale ~= '1') or (now and now ~= '' and not ms(now)) or not string.find(k, '^kr:{c:[^{}]+}:e:[^{}]+$') then
  return redis.error_reply('ERR keyroute sc-get: needs KEYS entry (kr:{c:T}:e:<kind>) and ARGV lease_ms (1..2^48), owner (at most 256 bytes), xfetch_e (decimal >= 0, 0 = off), allow_stale (0 or 1)[, now_ms]')
end
if now and now ~= '' then now = ms(now) else
  local tm = redis.call('TIME')
  now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
end
local function s(n) return string.format('%d', n) end
local h = redis.pcall('HMGET', k, 'v', 'ver', 'sx', 'd', 'st', 'lx', 'f', 'e', 'em', 'ex', 'hx')
if h.err then
  return redis.error_reply('WRONGTYPE keyroute sc-get: ' .. k .. ' does not hold a hash; nothing was changed')
end
if h[11] and tonumber(h[11]) <= now then redis.call('DEL', k); h = {} end
local v, ver, sx, d = h[1], tonumber(h[2] or 0), tonumber(h[3] or 0), tonumber(h[4] or 0)
local lx, f, ex, hx = tonumber(h[6] or 0), tonumber(h[7] or 0), tonumber(h[10] or 0), tonumber(h[11] or 0)
local leased = h[5] == 'u' and lx > now
local takeover = (h[5] == 'u' and not leased) and 1 or 0
local err = h[8] and ex > now
local function grant()
  local nf, nhx = math.max(f + 1, now), math.max(hx, now + 2 * lease)
  redis.call('HSET', k, 'st', 'u', 'lx', s(now + lease), 'f', s(nf), 'lo', owner, 'hx', s(nhx))
  redis.call('PEXPIREAT', k, s(nhx))
  return nf
end
if v then
  if now < sx then
    if not leased and not err and xe > 0 and d > 0 and now + d * xe >= sx then return {2, v, ver, grant(), takeover} end
    return {1, v, ver}
  end
  if leased then
    if stale == '1' then return {3, v, ver} end
    return {5, lx - now, f}
  end
  if err then
    if stale == '1' then return {3, v, ver} end
    return {6, h[8], h[9] or '', ex - now}
  end
  if stale == '1' then return {2, v, ver, grant(), takeover} end
  return {4, grant(), takeover}
end
if leased then return {5, lx - now, f} end
if err then return {6, h[8], h[9] or '', ex - now} end
return {4, grant(), takeover}
