-- Takes a staged job out of the staged order (prioritized, or a foreign
-- job's wait list).
local function dequeueJob(base, runId)
  if redis.call("ZREM", KEY.queuePrioritized(base), runId) == 0 then
    redis.call("LREM", KEY.queueWait(base), 1, runId)
  end
end
