-- @include amounts/parseAmount
-- @include amounts/formatAmount
-- @include amounts/addAmounts
-- @include amounts/parseResourceList
-- @include amounts/adjustAmounts

-- Gives the worker share of a claim back to the worker's free capacity and
-- devices.
local function releaseWorkerShare(freeKey, devicesKey, reserved, devices, deviceShare)
  adjustAmounts(freeKey, parseResourceList(reserved), 1)
  if devices and devices ~= "" then
    local share = parseAmount(deviceShare)
    for id in string.gmatch(devices, "[^,]+") do
      redis.call("HSET", devicesKey, id, formatAmount(addAmounts(parseAmount(redis.call("HGET", devicesKey, id)), share)))
    end
  end
end
