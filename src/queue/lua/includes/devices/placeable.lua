-- @include devices/gpuDemand
-- @include devices/pinsNotDevices

-- Whether a gpu demand (pinned to some devices, or not) can ever be placed
-- on the worker's devices.
local function placeable(devices, demand, pinned)
  local need = gpuDemand(demand)
  if #devices.ids == 0 or not need then return true end
  if #pinned > 0 then
    if #pinsNotDevices(devices, pinned) > 0 then return false end
    if need[2] == 0 then return need[1] == #pinned end
    return need[1] == 0 and #pinned == 1
  end
  if need[2] == 0 then return need[1] <= #devices.ids end
  return need[1] == 0
end
