-- @include candidates/fitsWithin
-- @include devices/placeable

-- Whether runs of a shape (as shapeDemand gives it) ever fit the worker:
-- its total capacity, the pool's and its devices (those usable now: see
-- placeable), and its maximum time limit.
local function fitsTotal(view, wanted)
  return #wanted.missing == 0 and not wanted.overLimit and fitsWithin(wanted.own, view.capacity) and
    fitsWithin(wanted.pooled, view.pool.capacity) and placeable(view.devices, wanted.own, wanted.pinned, true)
end
