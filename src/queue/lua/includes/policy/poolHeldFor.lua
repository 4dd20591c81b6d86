-- @include policy/poolHeldBefore

-- What is held of the pool for a candidate: by this worker's head, else by
-- the older hold elsewhere (once this worker holds a head, it is older than
-- any hold elsewhere). Also returns the run holding it, and its worker.
local function poolHeldFor(walk, candidate)
  if walk.heldPool then return walk.heldPool, walk.head.id, walk.view.name end
  local olderHold = walk.view.olderHold
  return poolHeldBefore(walk.view, candidate.key), olderHold and olderHold.id, olderHold and olderHold.worker
end
