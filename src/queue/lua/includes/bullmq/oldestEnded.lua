-- The `count` + 1 jobs of BullMQ's ended state `state` ("completed" or
-- "failed") that ended first.
local function oldestEnded(base, state, count)
  return redis.call("ZRANGE", state == "completed" and KEY.queueCompleted(base) or KEY.queueFailed(base), 0, count)
end
