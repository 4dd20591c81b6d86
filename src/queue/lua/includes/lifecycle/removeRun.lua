-- @include arrays/forgetArrayRun
-- @include bullmq/deleteJob
-- @include lifecycle/dropRunKeys

-- Removes a run (a staged one is unstaged first) whose status is `status`:
-- its place in its array (forgetArrayRun), its job (deleteJob, with BullMQ's
-- `removed` event), the keys fitq keeps beside it (dropRunKeys) and its id.
-- `removeRuns`, `cleanRuns` and retention (trimEndedRuns) share it.
local function removeRun(base, runId, status)
  forgetArrayRun(base, runId)
  deleteJob(base, runId, status)
  dropRunKeys(base, runId)
  redis.call("ZREM", KEY.ids(base), runId)
end
