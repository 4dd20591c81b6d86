-- @include devices/gpuDemand
-- @include devices/placeDevices
-- @include devices/shiftDevices

-- Where a later run's gpu demand goes beside a blocked head, or nil when it
-- would take what the head needs. `spare`: the devices a pinned head keeps.
-- `headDevices` (an unpinned head's demand `own`, and the devices it would
-- get now, `placed`, with their `share`; placed is nil when it cannot be
-- placed now), if any: the later run goes on what the head's own placement
-- leaves, else where it would go anyway if the head can still be placed
-- after it. A head that cannot be placed now lets later runs take no device.
local function placeBesideHead(devices, spare, headDevices, demand, pinned)
  if headDevices == nil or not gpuDemand(demand) then
    return placeDevices(devices, demand, pinned, spare)
  end
  local headPlaced, headShare = headDevices.placed, headDevices.share
  if headPlaced == nil then return nil end
  shiftDevices(devices, headPlaced, headShare, -1)
  local ids, amount = placeDevices(devices, demand, pinned, spare)
  shiftDevices(devices, headPlaced, headShare, 1)
  if ids then return ids, amount end
  ids, amount = placeDevices(devices, demand, pinned, spare)
  if not ids then return nil end
  shiftDevices(devices, ids, amount, -1)
  local headStillFits = placeDevices(devices, headDevices.own, {}, {}) ~= nil
  shiftDevices(devices, ids, amount, 1)
  if headStillFits then return ids, amount end
  return nil
end
