-- @include devices/gpuDemand
-- @include devices/memoryDemand
-- @include devices/memoryFits
-- @include devices/pinsNotDevices

-- Whether a gpu demand (pinned to some devices, or not) can ever be placed
-- on the worker's devices, a gpumem demand within their total memory; with
-- `now`, on those its GPU probe finds usable now (readDevices): a run that
-- could not start even if every run of the worker ended waits for the
-- devices without being its blocked head. A whole demand above one device
-- counts no MIG device (`migs`).
local function placeable(devices, demand, pinned, now)
  local need = gpuDemand(demand)
  if #devices.ids == 0 or not need then return true end
  local unusable = now and devices.unusable or {}
  local memory = memoryDemand(demand)
  local migs = devices.migs or {}
  if #pinned > 0 then
    if #pinsNotDevices(devices, pinned) > 0 then return false end
    for _, id in ipairs(pinned) do
      if unusable[id] or not memoryFits(devices, id, memory, true) or (#pinned > 1 and migs[id]) then return false end
    end
    if need[2] == 0 then return need[1] == #pinned end
    return need[1] == 0 and #pinned == 1
  end
  local count = 0
  for _, id in ipairs(devices.ids) do
    if not unusable[id] and memoryFits(devices, id, memory, true) and not (need[1] > 1 and migs[id]) then count = count + 1 end
  end
  if need[2] == 0 then return need[1] <= count end
  return need[1] == 0 and count > 0
end
