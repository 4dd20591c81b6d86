-- The names of every resource a shape demands (as readShape read it),
-- joined by commas as its group once was (arrays' limits among them):
-- how an older fitq grouped it.
local function demandNames(parsed)
  local names = {}
  for i, item in ipairs(parsed.demand) do names[i] = item[1] end
  return #names == 0 and "none" or table.concat(names, ",")
end
