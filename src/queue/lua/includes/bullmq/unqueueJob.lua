-- @include bullmq/dequeueJob

-- Takes a staged job out of every state a staged run's job may be in: the
-- staged order (dequeueJob), delayed and waiting-children (a parked run's).
local function unqueueJob(base, runId)
  dequeueJob(base, runId)
  redis.call("ZREM", KEY.queueDelayed(base), runId)
  redis.call("ZREM", KEY.queueWaitingChildren(base), runId)
end
