-- @include amounts/parseResourceList
-- @include amounts/adjustAmounts
-- @include arrays/arrayOfLimit
-- @include arrays/unparkArray

-- Gives a claim's pool share back (an array's runs waiting for its limit
-- may start again: unparkArray); returns whether there was one.
local function releasePoolShare(base, pooled)
  local list = parseResourceList(pooled)
  adjustAmounts(KEY.poolUsed(base), list, -1)
  for _, item in ipairs(list) do
    local array = arrayOfLimit(item[1])
    if array then unparkArray(base, array) end
  end
  return #list > 0
end
