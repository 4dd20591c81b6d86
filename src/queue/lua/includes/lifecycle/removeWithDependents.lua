-- @include lifecycle/removeRun
-- @include dependencies/settlePendingDependents

-- Removes a run (see removeRun) that other runs may still wait for (a
-- staged one, whose status is `status`): it is
-- left in `dependents-pending` so its set outlives its job, then up to
-- `budget` of its dependents are judged at once (a dependency removed can
-- never be met: they end canceled, or stay parked if kept); the rest are
-- judged by reconcileRuns.
local function removeWithDependents(base, runId, status, now, logMaxLines, budget)
  if redis.call("SCARD", KEY.dependents(base, runId)) > 0 then
    redis.call("HSET", KEY.dependentsPending(base), runId, "0")
  end
  removeRun(base, runId, status)
  settlePendingDependents(base, now, logMaxLines, budget)
end
