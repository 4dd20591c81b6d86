-- @include amounts/parseAmount
-- @include amounts/formatAmount
-- @include amounts/addAmounts
-- @include amounts/subtractAmounts

-- Adds sign * amount of each listed resource to the hash at key.
local function adjustAmounts(key, list, sign)
  for _, item in ipairs(list) do
    local current = parseAmount(redis.call("HGET", key, item[1]) or "0")
    local updated = sign > 0 and addAmounts(current, item[2]) or subtractAmounts(current, item[2])
    redis.call("HSET", key, item[1], formatAmount(updated))
  end
end
