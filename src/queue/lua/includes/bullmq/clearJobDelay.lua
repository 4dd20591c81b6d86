-- A job back in the staged order from a parked state: BullMQ's `delay` is 0
-- again.
local function clearJobDelay(base, runId)
  redis.call("HSET", KEY.run(base, runId), "delay", 0)
end
