-- @include amounts/parseAmount

-- What a user's running runs add to their usage per second: the weights
-- (fairSettings) of what they hold now, as `usage:<user>` counts it
-- (`runs`, and `res:<resource>`, quotas/chargeOwner), summed.
local function usageRate(base, settings, user)
  local flat = redis.call("HGETALL", KEY.userUsage(base, user))
  local rate = 0
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    local name = field == "runs" and "run" or string.match(field, "^res:(.+)$")
    local weight = name and settings.weights[name]
    if weight and weight > 0 then
      local amount = parseAmount(value)
      rate = rate + weight * math.max(amount[1] + amount[2] / 1000000, 0)
    end
  end
  return rate
end
