-- @include fitsWithin
-- @include placeInWalk
-- @include poolHeldFor

-- Whether a candidate may start now in this walk: the devices it gets and
-- the share of each ({} for none), or nil. It must fit what is free, less
-- what the blocked head holds.
local function startsNow(walk, candidate)
  local view = walk.view
  if fitsWithin(candidate.own, view.free, walk.held) and
      fitsWithin(candidate.pooled, view.pool.free, (poolHeldFor(walk, candidate))) then
    return placeInWalk(walk, candidate)
  end
  return nil
end
