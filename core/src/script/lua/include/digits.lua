local function s(n) return string.format('%d', n) end
