-- @include amounts/readAmounts
-- @include amounts/subtractAmounts

-- The pool: its capacity and what is free of it (resource -> amount).
local function readPool(poolCapacityKey, poolUsedKey)
  local capacity = readAmounts(poolCapacityKey)
  local used = readAmounts(poolUsedKey)
  local free = {}
  for resource, total in pairs(capacity) do
    free[resource] = subtractAmounts(total, used[resource] or {0, 0})
  end
  return {capacity = capacity, free = free}
end
