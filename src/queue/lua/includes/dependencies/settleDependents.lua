-- @include dependencies/evaluateDependent
-- @include namespace/publish

-- Run `runId` ended (or is about to be removed): judges the runs that depend
-- on it (the set `dependents:<id>`), and those of every dependent canceled
-- for it, in turn; `arrayCause`, if given, is the array of `runId` (see
-- arrayCause) when what the runs waiting for it may conclude changed, and
-- so is that of a dependent canceled. About DEPENDENTS_BATCH dependents per call: the rest of
-- a run with more (or whose turn comes after the budget is spent) is left in
-- `dependents-pending` (run id -> SSCAN cursor where this call stopped),
-- which reconcileRuns works through, a batch per call
-- (settlePendingDependents), and `dependents` is published so workers
-- reconcile at once. `most`, if given, is the budget instead of
-- DEPENDENTS_BATCH (what the caller has left of its own). Returns how many
-- dependents it judged.
local DEPENDENTS_BATCH = 100
local function settleDependents(base, runId, now, logMaxLines, arrayCause, most)
  local queue, budget, left = {runId, arrayCause}, most or DEPENDENTS_BATCH, false
  local i = 1
  while i <= #queue do
    local cause = queue[i]
    i = i + 1
    local setKey = KEY.dependents(base, cause)
    local count = redis.call("SCARD", setKey)
    local members, cursor = {}, "0"
    if count > budget then
      -- Too many for this call: a first batch now, the rest from where SSCAN stopped.
      if budget > 0 then
        local reply = redis.call("SSCAN", setKey, "0", "COUNT", budget)
        cursor, members = reply[1], reply[2]
      else
        cursor = "0"
      end
      if cursor ~= "0" or budget <= 0 then
        redis.call("HSET", KEY.dependentsPending(base), cause, cursor)
        left = true
      end
    elseif count > 0 then
      members = redis.call("SMEMBERS", setKey)
    end
    for _, dependent in ipairs(members) do
      budget = budget - 1
      local canceled, itsArray = evaluateDependent(base, dependent, cause, now, logMaxLines)
      if canceled then queue[#queue + 1] = dependent end
      if itsArray then queue[#queue + 1] = itsArray end
    end
  end
  if left then publish(base, {type = "dependents"}) end
  return (most or DEPENDENTS_BATCH) - budget
end
