-- @include amounts/parseResourceList
-- @include amounts/adjustAmounts
-- @include arrays/arrayOfLimit
-- @include arrays/unparkArray
-- @include quotas/releaseUser

-- Gives a claim's pool share back (an array's runs waiting for its limit
-- may start again: unparkArray), and what it counted against its user
-- (`charged`, releaseUser; `gone`: its job was deleted under it); returns
-- whether runs waiting for either may start now.
local function releasePoolShare(base, pooled, charged, gone)
  local list = parseResourceList(pooled)
  adjustAmounts(KEY.poolUsed(base), list, -1)
  for _, item in ipairs(list) do
    local array = arrayOfLimit(item[1])
    if array then unparkArray(base, array) end
  end
  local quota = releaseUser(base, charged, gone)
  return #list > 0 or quota
end
