-- Takes an active job out of active and drops its lock (it ends: finishJob
-- follows; to go back to waiting, see returnJob).
local function deactivateJob(base, runId)
  redis.call("LREM", KEY.queueActive(base), -1, runId)
  redis.call("DEL", KEY.runLock(base, runId))
end
