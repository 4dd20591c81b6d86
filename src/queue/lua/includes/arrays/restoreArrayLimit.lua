-- A run of an array staged again (restarted, retried from BullMQ): its
-- array's limit, removed from the pool once the array had ended (`fitq
-- pool rm`), comes back as it was staged (the job's `arrayLimit`), or the
-- run, demanding it, could never start.
local function restoreArrayLimit(base, runId)
  local run = redis.call("HMGET", KEY.run(base, runId), "array", "arrayLimit")
  if not run[1] or not run[2] then return end
  redis.call("HSETNX", KEY.poolCapacity(base), "array." .. run[1], run[2])
end
