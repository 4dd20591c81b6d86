-- @include lifecycle/placeStaged
-- @include namespace/publish
-- @include namespace/serverNow

-- Reconciling (see reconcileRuns), a parked staged run (held, waiting for its
-- begin time or its dependencies, see placeStaged) whose job BullMQ may have
-- moved (promote, retry of a delayed job, changePriority): put back where it
-- belongs, never in the fit index while it may not start. One BullMQ
-- promoted (moved from delayed to prioritized or wait) that is not held nor
-- waiting for dependencies (`blocked`) begins now. `beginAt`: its job's.
local function followPromote(r, runId, beginAt, blocked)
  local base = r.base
  local delayedKey, prioritizedKey, waitKey = KEY.queueDelayed(base), KEY.queuePrioritized(base), KEY.queueWait(base)
  if beginAt and not blocked and redis.call("ZSCORE", delayedKey, runId) == false and
      (redis.call("ZSCORE", prioritizedKey, runId) ~= false or redis.call("LPOS", waitKey, runId) ~= false) then
    redis.call("HDEL", KEY.run(base, runId), "beginAt")
    r.act("promoted", runId)
  end
  redis.call("LREM", waitKey, 0, runId)
  if placeStaged(base, runId, serverNow()) == "staged" then publish(base, {type = "staged", count = 1}) end
end
