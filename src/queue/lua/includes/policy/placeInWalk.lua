-- @include devices/placeBesideHead

-- Where a candidate's gpu demand goes beside the walk's head (see
-- placeBesideHead); nil when it may not go there now.
local function placeInWalk(walk, candidate)
  return placeBesideHead(walk.view.devices, walk.spare, walk.headDevices, candidate.own, candidate.pinned)
end
