-- Takes an ended job out of completed and failed, with what its end and its
-- start recorded (`returnvalue`, `failedReason`, `finishedOn`, `processedOn`,
-- `pb`), as BullMQ's retry does: its run is staged again (fitq restart, or
-- a retry from BullMQ that reconciling follows).
local function reopenJob(base, runId)
  redis.call("ZREM", KEY.queueCompleted(base), runId)
  redis.call("ZREM", KEY.queueFailed(base), runId)
  redis.call("HDEL", KEY.run(base, runId), "returnvalue", "failedReason", "finishedOn", "processedOn", "pb")
end
