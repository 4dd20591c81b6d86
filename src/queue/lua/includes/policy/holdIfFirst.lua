-- @include devices/gpuDemand
-- @include devices/placeDevices
-- @include policy/shadowTime

-- Makes a candidate that cannot start the walk's blocked head, if it is the
-- first such and no other live worker holds it or an older run (backfill),
-- and knows when it could start at the earliest (shadowTime).
-- Returns whether it did.
local function holdIfFirst(walk, candidate)
  local olderHold = walk.view.olderHold
  if walk.head ~= nil or (olderHold ~= nil and candidate.key >= olderHold.key) then return false end
  local devices = walk.view.devices
  walk.head = candidate
  walk.held, walk.heldPool = {}, {}
  for _, item in ipairs(candidate.own) do walk.held[item[1]] = item[2] end
  for _, item in ipairs(candidate.pooled) do walk.heldPool[item[1]] = item[2] end
  -- On devices the head holds devices, not a count of gpu: a pinned head
  -- its own devices, an unpinned one its placement.
  if #devices.ids > 0 and gpuDemand(candidate.own) then
    walk.held.gpu = nil
    if #candidate.pinned > 0 then
      for _, id in ipairs(candidate.pinned) do walk.spare[id] = true end
    else
      local headPlaced, headShare = placeDevices(devices, candidate.own, {}, {})
      walk.headDevices = {own = candidate.own, placed = headPlaced, share = headShare}
    end
  end
  -- Its shadow time, read now: one read per walk with a head, whatever follows.
  shadowTime(walk)
  return true
end
