-- @include bullmq/emitEvent

-- Parks a job, held or waiting for its dependencies, in BullMQ's
-- waiting-children (score: its sequence number), with BullMQ's event when it
-- moves there. Out of delayed, if it was there.
local function parkJob(base, runId, seq)
  redis.call("ZREM", KEY.queueDelayed(base), runId)
  if redis.call("ZADD", KEY.queueWaitingChildren(base), seq, runId) == 1 then
    emitEvent(base, "waiting-children", runId)
  end
end
