-- @include amounts/compareAmounts
-- @include amounts/subtractAmounts

-- Whether every demanded amount is within what is available, less what is
-- held (for a blocked head) in `held`.
local function fitsWithin(demand, available, held)
  for _, item in ipairs(demand) do
    local limit = available[item[1]]
    if held and held[item[1]] then limit = subtractAmounts(limit, held[item[1]]) end
    if compareAmounts(item[2], limit) > 0 then return false end
  end
  return true
end
