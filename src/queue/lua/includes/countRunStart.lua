-- @include jobKey
-- @include observeRunTime

-- A run just claimed (its job activated at `now`): how long it waited since
-- it was staged, in the run statistics (see runTimeBounds), on its first
-- start only.
local function countRunStart(base, runId, now)
  local run = redis.call("HMGET", jobKey(base, runId), "ats", "timestamp")
  local staged = tonumber(run[2] or "")
  if run[1] ~= "1" or not staged then return end
  observeRunTime(base, "wait", "wait", now - staged)
end
