-- @include amounts/compareAmounts
-- @include devices/gpuDemand
-- @include devices/memoryDemand
-- @include devices/memoryFits

local WHOLE_DEVICE = {1, 0}

-- The devices (and the share of each) a gpu demand gets now, leaving alone
-- the devices in `spare`; {} when there is nothing to place; nil when it
-- cannot be placed now. A gpumem demand goes only on devices with that
-- much memory free (memoryFits); a whole demand above one device never on
-- MIG devices (`migs`: CUDA shows a process one MIG device at most).
local function placeDevices(devices, demand, pinned, spare)
  local need = gpuDemand(demand)
  local memory = memoryDemand(demand)
  if #devices.ids == 0 or not need then return {}, nil end
  local shares = devices.shares
  local share = need[2] == 0 and WHOLE_DEVICE or need
  local migs = devices.migs or {}
  if #pinned > 0 then
    for _, id in ipairs(pinned) do
      if spare[id] or compareAmounts(shares[id], share) < 0 or not memoryFits(devices, id, memory) or (#pinned > 1 and migs[id]) then
        return nil
      end
    end
    return pinned, share
  end
  if need[2] == 0 then
    local chosen = {}
    for _, id in ipairs(devices.ids) do
      if not spare[id] and compareAmounts(shares[id], WHOLE_DEVICE) == 0 and memoryFits(devices, id, memory) and
          not (need[1] > 1 and migs[id]) then
        chosen[#chosen + 1] = id
        if #chosen == need[1] then return chosen, WHOLE_DEVICE end
      end
    end
    return nil
  end
  -- pack: the fullest device that fits; spread: the emptiest (ties: lowest index).
  local better = devices.spread and 1 or -1
  local best
  for _, id in ipairs(devices.ids) do
    if not spare[id] and compareAmounts(shares[id], need) >= 0 and memoryFits(devices, id, memory) and
        (best == nil or compareAmounts(shares[id], shares[best]) == better) then
      best = id
    end
  end
  if best then return {best}, need end
  return nil
end
