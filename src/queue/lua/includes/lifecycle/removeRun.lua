-- @include arrays/forgetArrayRun
-- @include bullmq/deleteJob
-- @include lifecycle/dropRunKeys
-- @include lifecycle/unorderRun
-- @include arrays/tallyState
-- @include quotas/tallyUserRun

-- Removes a run (a staged one is unstaged first) whose status is `status`:
-- its place in its array (forgetArrayRun), its job (deleteJob, with BullMQ's
-- `removed` event), the keys fitq keeps beside it (dropRunKeys), its id and
-- its place in the order index (unorderRun); removed before it ended, it no
-- longer counts for its user (tallyUserRun).
-- `removeRuns`, `cleanRuns` and retention (trimEndedRuns) share it.
local function removeRun(base, runId, status)
  unorderRun(base, runId)
  forgetArrayRun(base, runId)
  tallyUserRun(base, runId, tallyState(status), nil)
  deleteJob(base, runId, status)
  dropRunKeys(base, runId)
  redis.call("ZREM", KEY.ids(base), runId)
end
