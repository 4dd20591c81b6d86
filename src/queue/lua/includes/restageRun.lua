-- @include jobKey
-- @include parseResourceList
-- @include adjustAmounts
-- @include deactivateJob
-- @include emitEvent
-- @include retriesOf
-- @include storedShape
-- @include stage
-- @include publish
-- @include serverNow
-- @include recordAttempt
-- @include countRestage

-- Puts a running run whose worker died back at its place in the order, if
-- it has retries left and no cancellation is pending for it; returns whether
-- it did. What it reserved goes back with the worker's keys and, for the
-- pool, here.
local function restageRun(base, runId, reason, logMaxLines)
  local runKey = jobKey(base, runId)
  local run = redis.call("HMGET", runKey, "restaged", "pooled", "score", "cancelRequested")
  local retries, restaged = retriesOf(runKey), tonumber(run[1] or "0")
  if restaged >= retries or run[4] == "1" then return false end
  recordAttempt(base, runId, "lost", serverNow(), reason)
  countRestage(base, "worker")
  adjustAmounts(base .. "pool:used", parseResourceList(run[2]), -1)
  deactivateJob(base, runId)
  redis.call("HDEL", runKey, "worker", "processedOn", "pb", "devices", "deviceShare", "reserved", "pooled",
    "cancelRequested")
  redis.call("HSET", runKey, "status", "staged", "restaged", restaged + 1,
    "restagedReason", reason .. " (re-staged " .. (restaged + 1) .. " of " .. retries .. ")")
  emitEvent(base, "event", "restaged", "jobId", runId, "reason", reason)
  stage(base, runId, storedShape(runKey), run[3], "active")
  redis.call("XADD", runKey .. ":output", "MAXLEN", "~", logMaxLines, "*", "event", "restaged", "reason", reason)
  publish(base, {type = "staged", count = 1})
  return true
end
