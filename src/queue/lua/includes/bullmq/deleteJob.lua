-- @include bullmq/emitEvent
-- @include bullmq/jobState

-- Deletes a job: its place in every state, its hash, its lock and BullMQ's
-- logs list. Given its run's `status`, BullMQ's `removed` event follows
-- (`prev`: the state it was in, see jobState); without one, none (a job
-- BullMQ itself removed). The keys fitq keeps beside it are the caller's
-- (lifecycle/dropRunKeys).
local function deleteJob(base, runId, status)
  for _, key in ipairs({KEY.queuePrioritized(base), KEY.queueCompleted(base), KEY.queueFailed(base),
      KEY.queueDelayed(base), KEY.queueWaitingChildren(base)}) do
    redis.call("ZREM", key, runId)
  end
  redis.call("LREM", KEY.queueWait(base), 0, runId)
  redis.call("LREM", KEY.queueActive(base), 0, runId)
  redis.call("DEL", KEY.run(base, runId), KEY.runLock(base, runId), KEY.runLogs(base, runId))
  if status ~= nil then emitEvent(base, "removed", runId, "prev", jobState(status)) end
end
