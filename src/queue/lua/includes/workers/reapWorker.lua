-- @include bullmq/jobStartedAt
-- @include lifecycle/readRun
-- @include claims/readClaim
-- @include claims/releasePoolShare
-- @include namespace/publish
-- @include lifecycle/settleAbandonedRun

-- Forgets a worker whose lease expired (or that restarts under the same
-- name, or stops): its running runs end as lost (canceled, if a cancellation
-- was pending; or are re-staged per their retries) at aliveAt (or at their
-- start, if later: a claim shows the worker alive too), its keys go. A run
-- whose job was deleted under it (from BullMQ) has only its pool share to
-- give back, from the worker's record of its claim.
local function reapWorker(base, name, aliveAt, reason, logMaxLines)
  local workerKey, reservedKey = KEY.worker(base, name), KEY.workerReserved(base, name)
  for _, runId in ipairs(redis.call("SMEMBERS", KEY.workerRuns(base, name))) do
    -- (A member written by hand, no run id or no job hash, has only a claim record to give back, if any.)
    local run = readRun(base, runId, "status", "worker") or {}
    if run[1] == "running" and run[2] == name then
      local endedAt = math.max(tonumber(aliveAt), jobStartedAt(base, runId) or 0)
      settleAbandonedRun(base, runId, reason, string.format("%.0f", endedAt), logMaxLines)
    else
      local claim = readClaim(reservedKey, runId)
      if claim and releasePoolShare(base, claim.pooled, claim.charged, not run[1]) then publish(base, {type = "poolReleased"}) end
    end
  end
  local holding = redis.call("HGET", workerKey, "holding")
  if holding and redis.call("HGET", KEY.holds(base), holding) == name then
    redis.call("HDEL", KEY.holds(base), holding)
  end
  redis.call("DEL", workerKey, KEY.workerCapacity(base, name), KEY.workerFree(base, name), KEY.workerRuns(base, name),
    KEY.workerDevices(base, name), KEY.workerGpus(base, name), reservedKey)
  redis.call("ZREM", KEY.workers(base), name)
  publish(base, {type = "workerLost", worker = name})
end
