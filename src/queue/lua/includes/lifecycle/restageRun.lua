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

-- Puts a running run its worker no longer runs back at its place in the
-- order, unless a cancellation is pending for it; returns whether it did.
-- What it reserved goes back with the worker's keys and, for the pool,
-- here. `how` says why, and what it costs the run:
--   "lost" (its worker died or gave it up): a retry, and an attempt in its
--     history; it ends instead (false) when it has no retries left;
--   "unstarted" (its worker could not start it): nothing, no attempt;
--   "preempted" (a claim preempted it, preemption/): no retry, but a
--     `preempted` attempt, and its `preempted` count goes up, which its next
--     start's environment says (FITQ_PREEMPTED).
local function restageRun(base, runId, reason, logMaxLines, how)
  local runKey = KEY.run(base, runId)
  local run = redis.call("HMGET", runKey, "restaged", "pooled", "score", "cancelRequested", "charged")
  local retries, restaged = retriesOf(base, runId), tonumber(run[1] or "0")
  if run[4] == "1" or (restaged >= retries and how == "lost") then return false end
  local why = reason .. " (put back: it never started)"
  if how == "lost" then
    recordAttempt(base, runId, "lost", serverNow(), reason)
    restaged = restaged + 1
    why = reason .. " (re-staged " .. restaged .. " of " .. retries .. ")"
  elseif how == "preempted" then
    recordAttempt(base, runId, "preempted", serverNow(), reason)
    why = reason .. " (put back at its place: no retry spent)"
    redis.call("HINCRBY", runKey, "preempted", 1)
  end
  countRestage(base, how == "preempted" and "preempted" or "worker")
  releasePoolShare(base, run[2], run[5])
  returnJob(base, runId)
  redis.call("HDEL", runKey, "worker", "devices", "deviceShare", "reserved", "pooled", "charged", "cancelRequested", "usage", "preempting")
  redis.call("HSET", runKey, "status", "staged", "restagedReason", why)
  if how == "lost" then redis.call("HSET", runKey, "restaged", restaged) end
  emitEvent(base, "restaged", runId, "reason", reason)
  stage(base, runId, storedShape(runKey), run[3], jobState("running"))
  redis.call("XADD", KEY.runLog(base, runId), "MAXLEN", "~", logMaxLines, "*", "event", "restaged", "reason", reason)
  publish(base, {type = "staged", count = 1})
  return true
end
