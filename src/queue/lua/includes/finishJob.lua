-- @include queueKey
-- @include jobKey
-- @include emitEvent
-- @include countEnded
-- @include countRunEnd

-- Records a job's end as BullMQ does: completed with the exit code as return
-- value, or failed with a failedReason starting with fitq's status ("lost:
-- worker w1 stopped renewing its lease"). `prev` is the state it ends from.
local function finishJob(base, runId, status, returnValue, reason, finishedOn, prev)
  local key = jobKey(base, runId)
  countRunEnd(base, runId, status, finishedOn)
  redis.call("HINCRBY", key, "atm", 1)
  if status == "completed" then
    redis.call("ZADD", queueKey(base, "completed"), finishedOn, runId)
    redis.call("HSET", key, "finishedOn", finishedOn, "returnvalue", returnValue)
    countEnded(base, "completed", finishedOn)
    emitEvent(base, "event", "completed", "jobId", runId, "returnvalue", returnValue, "prev", prev)
    return
  end
  local failedReason = status .. ": " .. reason
  redis.call("ZADD", queueKey(base, "failed"), finishedOn, runId)
  redis.call("HSET", key, "finishedOn", finishedOn, "failedReason", failedReason)
  countEnded(base, "failed", finishedOn)
  emitEvent(base, "event", "failed", "jobId", runId, "failedReason", failedReason, "prev", prev)
  -- fitq's own name for the end, for listeners that tell them apart.
  if status ~= "failed" then emitEvent(base, "event", status, "jobId", runId, "reason", reason) end
end
