-- @include emitEvent
-- @include deleteJob
-- @include forgetArrayRun

-- Removes a run that is not staged (a staged one is unstaged first): its
-- job's keys and place in every state (deleteJob), its id, its place in its
-- array (forgetArrayRun), and BullMQ's `removed` event, `prev` the state it
-- was in. `removeRuns`, `cleanRuns`
-- and retention (trimEndedRuns) share it.
local function removeRun(base, runId, prev)
  forgetArrayRun(base, runId)
  deleteJob(base, runId)
  emitEvent(base, "event", "removed", "jobId", runId, "prev", prev)
  redis.call("ZREM", base .. "ids", runId)
end
