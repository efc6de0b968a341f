local x = now + tonumber(${1})
local ma, ca = tonumber(${2}), tonumber(${3})
if ma > 0 and ca + ma < x then x = ca + ma end
