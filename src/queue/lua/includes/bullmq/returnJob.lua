-- @include bullmq/deactivateJob

-- Takes an active job back out of active to wait again (its run is staged
-- again): its lock goes, and so do its start and the worker that started it
-- (`processedOn`, `pb`), as for a job BullMQ moves back to waiting.
local function returnJob(base, runId)
  deactivateJob(base, runId)
  redis.call("HDEL", KEY.run(base, runId), "processedOn", "pb")
end
