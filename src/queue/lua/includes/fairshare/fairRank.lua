-- A user's place in a fair order (fairOrder): how many users need less
-- than they do (0: none; users alike share a place). Kept per user.
local function fairRank(order, user)
  local rank = order.ranks[user]
  if rank then return rank end
  local need = order.need[user] or 0
  local low, high = 1, #order.sorted + 1
  while low < high do
    local middle = math.floor((low + high) / 2)
    if order.sorted[middle] < need then low = middle + 1 else high = middle end
  end
  order.ranks[user] = low - 1
  return low - 1
end
