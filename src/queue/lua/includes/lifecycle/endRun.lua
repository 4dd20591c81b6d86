-- @include claims/releasePoolShare
-- @include bullmq/deactivateJob
-- @include bullmq/finishJob
-- @include bullmq/jobState
-- @include logs/endLog
-- @include namespace/publish
-- @include retention/trimEndedRuns
-- @include dependencies/settleDependents
-- @include lifecycle/notifyOutbox
-- @include arrays/tallyState
-- @include arrays/tallyArrayRun
-- @include quotas/tallyUserRun
-- @include lifecycle/runDataText
-- @include stats/countRunEnd

-- Ends a staged or running run: returns what it took from the pool, records
-- its end (BullMQ: completed or failed, see finishJob) and closes its log;
-- then applies the namespace's retention to the state it ended in (at most
-- RETENTION_BATCH runs removed, never this one), counts it in its array's
-- tally and judges the runs that depend on it, and on its array when that
-- changed what they may conclude (settleDependents). (Its worker's share is
-- released by the caller.) `returnValue` is the exit code
-- as JSON, for a completed run.
local function endRun(base, runId, status, now, reason, logMaxLines, returnValue)
  local runKey = KEY.run(base, runId)
  local was = redis.call("HGET", runKey, "status")
  -- (A run that is not staged is running.)
  local from = was == "staged" and "staged" or "running"
  local pooled = releasePoolShare(base, redis.call("HGET", runKey, "pooled"), redis.call("HGET", runKey, "charged"))
  if from == "running" then deactivateJob(base, runId) end
  redis.call("HSET", runKey, "status", status)
  if reason ~= nil and reason ~= "" then redis.call("HSET", runKey, "reason", reason) end
  -- (What it counted against its user is given back: the record would only repeat its user and demands.)
  redis.call("HDEL", runKey, "cancelRequested", "held", "beginAt", "waitDeps", "depsNever", "charged", "preempting")
  countRunEnd(base, runId, status, now)
  finishJob(base, runId, status, returnValue or "null", reason or "", now, jobState(from))
  endLog(base, runId, status, logMaxLines)
  publish(base, {type = "ended", runId = runId, status = status})
  -- Pool capacity came back: workers waiting for it should look again.
  if pooled then publish(base, {type = "poolReleased"}) end
  -- Its worker notifies of what it recorded; the rest is left for a worker to send.
  if from == "staged" or status == "lost" then notifyOutbox(base, runId, runDataText(base, runId)) end
  trimEndedRuns(base, jobState(status), RETENTION_BATCH, runId)
  tallyUserRun(base, runId, tallyState(was), tallyState(status))
  local arrayCause = tallyArrayRun(base, runId, tallyState(was), tallyState(status), status, reason)
  settleDependents(base, runId, now, logMaxLines, arrayCause)
end
