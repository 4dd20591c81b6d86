-- @include emitEvent
-- @include deleteJob

-- Removes a run that is not staged (a staged one is unstaged first): its
-- job's keys and place in every state (deleteJob), its id, and BullMQ's
-- `removed` event, `prev` the state it was in. `removeRuns`, `cleanRuns`
-- and retention (trimEndedRuns) share it.
local function removeRun(base, runId, prev)
  deleteJob(base, runId)
  emitEvent(base, "event", "removed", "jobId", runId, "prev", prev)
  redis.call("ZREM", base .. "ids", runId)
end
