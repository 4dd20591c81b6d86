-- @include batches/batchState
-- @include bullmq/jobActivatable
-- @include claims/liveClaim
-- @include namespace/tryCall
-- @include namespace/validName

-- What is wrong with a member of the staged index of `shape` (stagedKey),
-- as noteDrop takes it; nil when it is a staged run of that shape. Stale:
-- its job is gone or no longer staged (BullMQ removed it, or it moved on).
-- Invalid (written by hand): not a run id, a key that holds no job hash, a
-- job of another shape (which keeps its hold), a job whose epoch or count of
-- starts (HINCRBY'd by the claim: jobActivatable) is no integer, a run held by a live claim
-- (a running run put back as staged: see liveClaim). A run of a batch still
-- being staged in chunks (batchState) is not there yet: {kind = "open"},
-- which no one drops; one of a batch whose deadline passed uncommitted is
-- garbage: {kind = "batch"}, the run to remove.
local function checkStaged(base, stagedKey, shape, runId)
  local drop = {kind = "entry", key = stagedKey, shape = shape, member = runId, unhold = true}
  if not validName(runId) then
    drop.why = "not a run id"
    return drop
  end
  local run = tryCall("HMGET", KEY.run(base, runId), "status", "shape", "epoch", "worker", "batch", JOB_STARTS_FIELD)
  if not run then
    drop.why = "its key holds no job hash"
    return drop
  end
  if run[1] ~= "staged" then
    -- Gone with its job (drain, remove): fitq's reconcile has yet to forget the run.
    drop.gone = not run[1]
    return drop
  end
  local batch = batchState(base, run[5])
  if batch == "open" then return {kind = "open"} end
  if batch == "expired" then
    return {kind = "batch", key = stagedKey, shape = shape, member = runId, batch = run[5]}
  end
  if (run[2] or "none") ~= shape then
    drop.why, drop.unhold = "a run of another shape", false
    return drop
  end
  if (run[3] and not (string.match(run[3], "^%-?%d+$") and #run[3] <= 15)) or not jobActivatable(run[6]) then
    drop.why = "its job's epoch or ats is not an integer"
    return drop
  end
  if liveClaim(base, runId, run[4]) then
    drop.why = "its run is running (a live claim holds it): put back as staged by hand"
    return drop
  end
  return nil
end
