-- @include bullmq/emitEvent
-- @include bullmq/countEnded

-- Records a job's end as BullMQ does: completed with the exit code as return
-- value, or failed with a failedReason starting with fitq's status ("lost:
-- worker w1 stopped renewing its lease"); its attempts made (`atm`), its
-- end (`finishedOn`), BullMQ's metrics (countEnded) and events. `prev` is
-- the state it ends from (see jobState).
local function finishJob(base, runId, status, returnValue, reason, finishedOn, prev)
  local key = KEY.run(base, runId)
  redis.call("HINCRBY", key, "atm", 1)
  if status == "completed" then
    redis.call("ZADD", KEY.queueCompleted(base), finishedOn, runId)
    redis.call("HSET", key, "finishedOn", finishedOn, "returnvalue", returnValue)
    countEnded(base, "completed", finishedOn)
    emitEvent(base, "completed", runId, "returnvalue", returnValue, "prev", prev)
    return
  end
  local failedReason = status .. ": " .. reason
  redis.call("ZADD", KEY.queueFailed(base), finishedOn, runId)
  redis.call("HSET", key, "finishedOn", finishedOn, "failedReason", failedReason)
  countEnded(base, "failed", finishedOn)
  emitEvent(base, "failed", runId, "failedReason", failedReason, "prev", prev)
  -- fitq's own name for the end, for listeners that tell them apart.
  if status ~= "failed" then emitEvent(base, status, runId, "reason", reason) end
end
