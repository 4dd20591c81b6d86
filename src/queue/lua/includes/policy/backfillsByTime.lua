-- @include candidates/fitsWithin
-- @include devices/placeDevices
-- @include policy/poolHeldFor
-- @include policy/shadowTime

-- Whether a candidate that the walk's blocked head keeps from starting may
-- start anyway because it ends before the head could start (Slurm's
-- backfill): it has a time limit on this worker, it ends (now plus its
-- limit) no later than the head's shadow time (shadowTime), and it fits
-- what is free now, on the devices too; what the head holds of the pool
-- still holds. Returns the devices it gets and their share, or nil.
local function backfillsByTime(walk, candidate)
  local view = walk.view
  if walk.head == nil or walk.fifo or candidate.runLimit == nil then return nil end
  if not (fitsWithin(candidate.own, view.free) and
      fitsWithin(candidate.pooled, view.pool.free, (poolHeldFor(walk, candidate)))) then
    return nil
  end
  local shadow = shadowTime(walk)
  if shadow == nil or view.clock + candidate.runLimit > shadow then return nil end
  return placeDevices(view.devices, candidate.own, candidate.pinned, {})
end
