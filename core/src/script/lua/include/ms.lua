local function ms(s)
  if type(s) == 'string' and string.find(s, '^%d+$') and #s <= 15 and tonumber(s) <= 281474976710656 then return tonumber(s) end
end
