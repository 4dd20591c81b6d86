-- @include evaluateDependent
-- @include publish

-- Run `runId` ended (or is about to be removed): judges the runs that depend
-- on it (the set `dependents:<id>`), and those of every dependent canceled
-- for it, in turn. At most DEPENDENTS_BATCH dependents per call: a run with
-- more (or whose turn comes after the budget is spent) is left in
-- `dependents-pending` (run id -> SSCAN cursor), which reconcileRuns works
-- through, a batch per call (settlePendingDependents), and `staged` is
-- published so workers reconcile and claim at once.
local DEPENDENTS_BATCH = 100
local function settleDependents(base, runId, now, logMaxLines)
  local queue, budget, left = {runId}, DEPENDENTS_BATCH, false
  local i = 1
  while i <= #queue do
    local cause = queue[i]
    i = i + 1
    local setKey = base .. "dependents:" .. cause
    local count = redis.call("SCARD", setKey)
    if count > 0 and count > budget then
      redis.call("HSET", base .. "dependents-pending", cause, "0")
      left = true
    elseif count > 0 then
      for _, dependent in ipairs(redis.call("SMEMBERS", setKey)) do
        budget = budget - 1
        if evaluateDependent(base, dependent, cause, now, logMaxLines) then queue[#queue + 1] = dependent end
      end
    end
  end
  if left then publish(base, {type = "dependents"}) end
end
