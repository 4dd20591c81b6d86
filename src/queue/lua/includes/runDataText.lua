-- A run's job data as fitq wrote it (JSON text): its `runData`, which
-- BullMQ never writes (job.updateData rewrites `data` only; reconcileRuns
-- puts `data` back), else `data` for a run staged before fitq kept both.
local function runDataText(runKey)
  return redis.call("HGET", runKey, "runData") or redis.call("HGET", runKey, "data")
end
