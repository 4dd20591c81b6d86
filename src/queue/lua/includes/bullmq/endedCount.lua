-- How many jobs BullMQ's ended state `state` ("completed" or "failed") holds.
local function endedCount(base, state)
  return redis.call("ZCARD", state == "completed" and KEY.queueCompleted(base) or KEY.queueFailed(base))
end
