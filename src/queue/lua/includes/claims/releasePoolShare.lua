-- @include amounts/parseResourceList
-- @include amounts/adjustAmounts

-- Gives a claim's pool share back; returns whether there was one.
local function releasePoolShare(base, pooled)
  local list = parseResourceList(pooled)
  adjustAmounts(KEY.poolUsed(base), list, -1)
  return #list > 0
end
