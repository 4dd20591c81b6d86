-- @include queueKey
-- @include emitEvent

-- Puts a job in the staged order (BullMQ: prioritized), `prev` its former state.
local function enqueueJob(base, runId, score, prev)
  redis.call("ZADD", queueKey(base, "prioritized"), score, runId)
  if prev then
    emitEvent(base, "event", "waiting", "jobId", runId, "prev", prev)
  else
    emitEvent(base, "event", "waiting", "jobId", runId)
  end
end
