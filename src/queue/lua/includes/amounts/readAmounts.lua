-- @include amounts/parseAmount

-- A hash of name -> decimal amount, as a table of name -> amount.
local function readAmounts(key)
  local flat = redis.call("HGETALL", key)
  local amounts = {}
  for i = 1, #flat, 2 do amounts[flat[i]] = parseAmount(flat[i + 1]) end
  return amounts
end
