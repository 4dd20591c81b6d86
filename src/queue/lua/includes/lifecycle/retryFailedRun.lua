-- @include lifecycle/runData
-- @include lifecycle/recordAttempt
-- @include claims/releasePoolShare
-- @include bullmq/returnJob
-- @include lifecycle/placeStaged
-- @include namespace/publish
-- @include stats/countRestage

-- A running run that failed on its own (status "failed": a non-zero exit or
-- a signal; "timeout" too if staged with --retry-on-timeout) goes back to
-- staged when its job data's `retry` allows (`max` re-stages, counted in
-- `failures`; only these `exitCodes`, if listed): its attempt recorded
-- (recordAttempt), its pool share returned, at its original place in the
-- order after the backoff (`backoffMs`, doubled per failure if
-- `exponential`: a delayed run until then, see placeStaged). Its worker's
-- share is released by the caller. Returns whether it did.
local function retryFailedRun(base, runId, status, exitCode, signal, reason, now, logMaxLines)
  local retry = runData(base, runId).retry
  if type(retry) ~= "table" then return false end
  if status ~= "failed" and not (status == "timeout" and retry.onTimeout == true) then return false end
  local key = KEY.run(base, runId)
  local failures = tonumber(redis.call("HGET", key, "failures") or "0") or 0
  local most = tonumber(retry.max) or 0
  if failures >= most then return false end
  if type(retry.exitCodes) == "table" and #retry.exitCodes > 0 then
    local matches = false
    for _, code in ipairs(retry.exitCodes) do
      if exitCode ~= "" and tonumber(code) == tonumber(exitCode) then matches = true end
    end
    if not matches then return false end
  end
  local backoff = tonumber(retry.backoffMs) or 0
  if retry.exponential == true then backoff = backoff * 2 ^ failures end
  redis.call("HDEL", key, "exitCode", "signal")
  if exitCode ~= "" then redis.call("HSET", key, "exitCode", exitCode) end
  if signal ~= "" then redis.call("HSET", key, "signal", signal) end
  redis.call("HSET", key, "reason", reason)
  recordAttempt(base, runId, status, now)
  countRestage(base, "retry")
  releasePoolShare(base, redis.call("HGET", key, "pooled"), redis.call("HGET", key, "charged"))
  returnJob(base, runId)
  redis.call("HDEL", key, "worker", "devices", "deviceShare", "reserved", "pooled", "charged", "cancelRequested", "exitCode",
    "signal", "reason", "usage")
  local why = status .. " (" .. reason .. "): retry " .. (failures + 1) .. " of " .. most
  redis.call("HSET", key, "status", "staged", "failures", failures + 1, "restagedReason", why)
  if backoff > 0 then redis.call("HSET", key, "beginAt", string.format("%.0f", now + backoff)) end
  redis.call("XADD", KEY.runLog(base, runId), "MAXLEN", "~", logMaxLines, "*", "event", "restaged", "reason", why)
  placeStaged(base, runId, now)
  publish(base, {type = "staged", count = 1})
  return true
end
