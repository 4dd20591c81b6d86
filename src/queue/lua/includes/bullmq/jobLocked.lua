-- Whether a job's lock exists (set as it is activated, renewed with its
-- worker's lease, deleted when it ends or goes back to waiting).
local function jobLocked(base, runId)
  return redis.call("EXISTS", KEY.runLock(base, runId)) == 1
end
