-- @include queueKey

-- Takes a staged job out of the staged order (prioritized, or a foreign
-- job's wait list).
local function dequeueJob(base, runId)
  if redis.call("ZREM", queueKey(base, "prioritized"), runId) == 0 then
    redis.call("LREM", queueKey(base, "wait"), 1, runId)
  end
end
