-- @include amounts/addAmounts
-- @include amounts/subtractAmounts

-- Takes (sign -1) or gives back (1) a share of each listed device.
local function shiftDevices(devices, ids, amount, sign)
  local shares = devices.shares
  for _, id in ipairs(ids) do
    shares[id] = sign < 0 and subtractAmounts(shares[id], amount) or addAmounts(shares[id], amount)
  end
end
