-- Moves a job that is in the staged order (prioritized) to `score`; a job
-- that is not there (parked) stays where it is.
local function rescoreJob(base, runId, score)
  local key = KEY.queuePrioritized(base)
  if redis.call("ZSCORE", key, runId) then redis.call("ZADD", key, score, runId) end
end
