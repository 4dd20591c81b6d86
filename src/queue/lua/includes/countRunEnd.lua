-- @include jobKey
-- @include observeRunTime

-- A run ending with `status` at `finishedOn`, in the run statistics (see
-- runTimeBounds): counted, and how long it ran if it started.
local function countRunEnd(base, runId, status, finishedOn)
  redis.call("HINCRBY", base .. "stats", "ended:" .. status, 1)
  local started = tonumber(redis.call("HGET", jobKey(base, runId), "processedOn") or "")
  local ended = tonumber(finishedOn)
  if started and ended then observeRunTime(base, "duration:" .. status, "duration", ended - started) end
end
