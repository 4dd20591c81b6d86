-- @include shape/unstage
-- @include bullmq/finishJob
-- @include bullmq/jobState
-- @include logs/endLog
-- @include namespace/publish
-- @include retention/trimEndedRuns
-- @include arrays/tallyArrayRun
-- @include quotas/tallyUserRun
-- @include stats/countRunEnd

-- Ends a staged run that waits for its dependencies as `canceled`, for
-- `reason`, because run `cause` ended so that they can never be met (the
-- run records it as `canceledFor`: `fitq restart --cascade` re-stages it).
-- A staged run holds no reservation, so this is all endRun would do.
-- Returns the cause of its array when the runs waiting for that are to be
-- judged again (tallyArrayRun), else nil.
local function cancelParkedRun(base, runId, reason, cause, now, logMaxLines)
  local key = KEY.run(base, runId)
  unstage(base, runId, redis.call("HGET", key, "shape") or "none")
  redis.call("HDEL", key, "waitDeps", "depsNever", "beginAt")
  redis.call("HSET", key, "status", "canceled", "reason", reason, "canceledFor", cause)
  countRunEnd(base, runId, "canceled", now)
  finishJob(base, runId, "canceled", "null", reason, now, jobState("deps"))
  endLog(base, runId, "canceled", logMaxLines)
  publish(base, {type = "ended", runId = runId, status = "canceled"})
  trimEndedRuns(base, jobState("canceled"), RETENTION_BATCH, runId)
  tallyUserRun(base, runId, "open", "notok")
  return tallyArrayRun(base, runId, "open", "notok", "canceled", reason)
end
