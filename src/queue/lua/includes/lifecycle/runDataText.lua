-- @include bullmq/jobData

-- A run's job data as fitq wrote it (JSON text): its `runData`, which
-- BullMQ never writes (job.updateData rewrites `data` only; reconcileRuns
-- puts `data` back), else its job's `data` for a run staged before fitq
-- kept both.
local function runDataText(base, runId)
  return redis.call("HGET", KEY.run(base, runId), "runData") or jobData(base, runId)
end
