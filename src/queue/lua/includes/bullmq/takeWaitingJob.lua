-- Takes a job out of every state where it waits (prioritized, wait,
-- delayed); returns the state it was in ("waiting", "delayed"), or nil.
local function takeWaitingJob(base, runId)
  if redis.call("ZREM", KEY.queuePrioritized(base), runId) == 1 then return "waiting" end
  if redis.call("LREM", KEY.queueWait(base), 0, runId) > 0 then return "waiting" end
  if redis.call("ZREM", KEY.queueDelayed(base), runId) == 1 then return "delayed" end
  return nil
end
