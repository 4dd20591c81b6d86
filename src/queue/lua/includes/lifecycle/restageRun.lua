-- @include claims/releasePoolShare
-- @include bullmq/emitEvent
-- @include bullmq/jobState
-- @include bullmq/returnJob
-- @include lifecycle/retriesOf
-- @include shape/storedShape
-- @include shape/stage
-- @include namespace/publish
-- @include namespace/serverNow
-- @include lifecycle/recordAttempt
-- @include stats/countRestage

-- Puts a running run whose worker died back at its place in the order, if
-- it has retries left and no cancellation is pending for it; returns whether
-- it did. What it reserved goes back with the worker's keys and, for the
-- pool, here. A run that never started (`unstarted`: its worker could not
-- start it) spends no retry and leaves no attempt in its history.
local function restageRun(base, runId, reason, logMaxLines, unstarted)
  local runKey = KEY.run(base, runId)
  local run = redis.call("HMGET", runKey, "restaged", "pooled", "score", "cancelRequested", "charged")
  local retries, restaged = retriesOf(base, runId), tonumber(run[1] or "0")
  if run[4] == "1" or (restaged >= retries and not unstarted) then return false end
  local why = reason .. " (put back: it never started)"
  if not unstarted then
    recordAttempt(base, runId, "lost", serverNow(), reason)
    restaged = restaged + 1
    why = reason .. " (re-staged " .. restaged .. " of " .. retries .. ")"
  end
  countRestage(base, "worker")
  releasePoolShare(base, run[2], run[5])
  returnJob(base, runId)
  redis.call("HDEL", runKey, "worker", "devices", "deviceShare", "reserved", "pooled", "charged", "cancelRequested", "usage")
  redis.call("HSET", runKey, "status", "staged", "restagedReason", why)
  if not unstarted then redis.call("HSET", runKey, "restaged", restaged) end
  emitEvent(base, "restaged", runId, "reason", reason)
  stage(base, runId, storedShape(runKey), run[3], jobState("running"))
  redis.call("XADD", KEY.runLog(base, runId), "MAXLEN", "~", logMaxLines, "*", "event", "restaged", "reason", reason)
  publish(base, {type = "staged", count = 1})
  return true
end
