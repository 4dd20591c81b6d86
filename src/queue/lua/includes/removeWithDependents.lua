-- @include removeRun
-- @include settlePendingDependents

-- Removes a run that other runs may still wait for (a staged one): it is
-- left in `dependents-pending` so its set outlives its job, then up to
-- `budget` of its dependents are judged at once (a dependency removed can
-- never be met: they end canceled, or stay parked if kept); the rest are
-- judged by reconcileRuns.
local function removeWithDependents(base, runId, prev, now, logMaxLines, budget)
  if redis.call("SCARD", base .. "dependents:" .. runId) > 0 then
    redis.call("HSET", base .. "dependents-pending", runId, "0")
  end
  removeRun(base, runId, prev)
  settlePendingDependents(base, now, logMaxLines, budget)
end
