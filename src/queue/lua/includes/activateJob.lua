-- @include queueKey
-- @include jobKey
-- @include emitEvent
-- @include dequeueJob

-- Moves a claimed job to active under a lock that its worker renews with its
-- lease: BullMQ refuses to remove or clean a locked job. The lock comes
-- first: a Redis user refused SET (not a worker's ACL rule) fails the claim
-- before it has moved anything.
local function activateJob(base, runId, workerName, lockToken, lockMs, now)
  local key = jobKey(base, runId)
  redis.call("SET", key .. ":lock", lockToken, "PX", lockMs)
  dequeueJob(base, runId)
  redis.call("LPUSH", queueKey(base, "active"), runId)
  redis.call("HSET", key, "processedOn", now, "pb", workerName)
  redis.call("HINCRBY", key, "ats", 1)
  emitEvent(base, "event", "active", "jobId", runId, "prev", "waiting")
end
