-- @include policy/backfillsByTime
-- @include candidates/bareFull
-- @include candidates/fitsWithin
-- @include policy/placeInWalk
-- @include policy/poolHeldFor

-- Whether a candidate may start now in this walk: the devices it gets and
-- the share of each ({} for none), or nil; and whether it starts only
-- because it ends before the blocked head could start (backfillsByTime).
-- It must fit what is free, less what the blocked head holds, unless it
-- ends before the head could start anyway; a run that demands nothing
-- waits while the worker runs as many such runs as it takes (bareFull).
local function startsNow(walk, candidate)
  local view = walk.view
  if bareFull(view, candidate) then return nil end
  if fitsWithin(candidate.own, view.free, walk.held) and
      fitsWithin(candidate.pooled, view.pool.free, (poolHeldFor(walk, candidate))) then
    local placed, share = placeInWalk(walk, candidate)
    if placed then return placed, share, false end
  end
  local placed, share = backfillsByTime(walk, candidate)
  if placed then return placed, share, true end
  return nil
end
