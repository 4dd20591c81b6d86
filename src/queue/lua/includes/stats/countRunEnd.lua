-- @include bullmq/jobStartedAt
-- @include stats/observeRunTime

-- A run ending with `status` at `finishedOn`, in the run statistics (see
-- runTimeBounds): counted, and how long it ran if it started.
local function countRunEnd(base, runId, status, finishedOn)
  redis.call("HINCRBY", KEY.stats(base), "ended:" .. status, 1)
  local started = jobStartedAt(base, runId)
  local ended = tonumber(finishedOn)
  if started and ended then observeRunTime(base, "duration:" .. status, "duration", ended - started) end
end
