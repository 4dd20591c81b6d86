-- A job's `data` (for a fitq run, JSON text; BullMQ's updateData rewrites it).
local function jobData(base, runId)
  return redis.call("HGET", KEY.run(base, runId), "data")
end
