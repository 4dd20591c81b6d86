-- @include bullmq/emitEvent
-- @include bullmq/dequeueJob

-- Moves a claimed job to active under a lock that its worker renews with its
-- lease (extendLock): BullMQ refuses to remove or clean a locked job. The
-- lock comes first: a Redis user refused SET (not a worker's ACL rule) fails
-- the claim before it has moved anything. Its start (`processedOn`), by whom
-- (`pb`) and its count of starts (`ats`), as BullMQ's moveToActive records them.
local function activateJob(base, runId, workerName, lockToken, lockMs, now)
  local key = KEY.run(base, runId)
  redis.call("SET", KEY.runLock(base, runId), lockToken, "PX", lockMs)
  dequeueJob(base, runId)
  redis.call("LPUSH", KEY.queueActive(base), runId)
  redis.call("HSET", key, "processedOn", now, "pb", workerName)
  redis.call("HINCRBY", key, "ats", 1)
  emitEvent(base, "active", runId, "prev", "waiting")
end
