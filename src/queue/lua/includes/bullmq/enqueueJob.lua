-- @include bullmq/emitEvent

-- Puts a job in the staged order (BullMQ: prioritized) at `score` (see
-- orderScore), `prev` its former state (jobState), if any.
local function enqueueJob(base, runId, score, prev)
  redis.call("ZADD", KEY.queuePrioritized(base), score, runId)
  if prev then
    emitEvent(base, "waiting", runId, "prev", prev)
  else
    emitEvent(base, "waiting", runId)
  end
end
