-- @include bullmq/firstActivation
-- @include stats/observeRunTime

-- A run just claimed (its job activated at `now`): how long it waited since
-- it was staged, in the run statistics (see runTimeBounds), on its first
-- start only.
local function countRunStart(base, runId, now)
  local staged = firstActivation(base, runId)
  if not staged then return end
  observeRunTime(base, "wait", "wait", now - staged)
end
