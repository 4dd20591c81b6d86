-- @include queueKey
-- @include jobKey
-- @include emitEvent
-- @include dequeueJob

-- Moves a claimed job to active under a lock that its worker renews with its
-- lease: BullMQ refuses to remove or clean a locked job.
local function activateJob(base, runId, workerName, lockToken, lockMs, now)
  local key = jobKey(base, runId)
  dequeueJob(base, runId)
  redis.call("LPUSH", queueKey(base, "active"), runId)
  redis.call("SET", key .. ":lock", lockToken, "PX", lockMs)
  redis.call("HSET", key, "processedOn", now, "pb", workerName)
  redis.call("HINCRBY", key, "ats", 1)
  emitEvent(base, "event", "active", "jobId", runId, "prev", "waiting")
end
