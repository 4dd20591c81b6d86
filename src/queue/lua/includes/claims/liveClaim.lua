-- @include bullmq/jobLocked
-- @include namespace/tryCall
-- @include namespace/validName

-- Whether a run is held by a live claim: its job's lock (set by the claim,
-- renewed with its worker's lease, deleted when the run ends or goes back
-- to staged) exists, or the worker its job names (`worker`) still keeps
-- the record of a claim on it. A staged run never is, unless it was put
-- back by hand while running (a replay): starting it would run a second copy.
local function liveClaim(base, runId, worker)
  if jobLocked(base, runId) then return true end
  return validName(worker) and tryCall("HEXISTS", KEY.workerReserved(base, worker), runId) == 1
end
