-- @include amounts/formatAmount

-- A list of {name, amount} as "a=1 b=0.5" (names in list order).
local function formatResourceList(list)
  local parts = {}
  for _, item in ipairs(list) do parts[#parts + 1] = item[1] .. "=" .. formatAmount(item[2]) end
  return table.concat(parts, " ")
end
