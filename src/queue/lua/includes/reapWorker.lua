-- @include readRun
-- @include claimsKey
-- @include readClaim
-- @include releasePoolShare
-- @include publish
-- @include settleAbandonedRun

-- Forgets a worker whose lease expired (or that restarts under the same
-- name, or stops): its running runs end as lost (canceled, if a cancellation
-- was pending; or are re-staged per their retries) at aliveAt (or at their
-- start, if later: a claim shows the worker alive too), its keys go. A run
-- whose job was deleted under it (from BullMQ) has only its pool share to
-- give back, from the worker's record of its claim.
local function reapWorker(base, name, aliveAt, reason, logMaxLines)
  local workerKey = base .. "worker:" .. name
  for _, runId in ipairs(redis.call("SMEMBERS", workerKey .. ":runs")) do
    -- (A member written by hand, no run id or no job hash, has only a claim record to give back, if any.)
    local run = readRun(base, runId, "status", "worker", "processedOn") or {}
    if run[1] == "running" and run[2] == name then
      local endedAt = math.max(tonumber(aliveAt), tonumber(run[3] or "") or 0)
      settleAbandonedRun(base, runId, reason, string.format("%.0f", endedAt), logMaxLines)
    else
      local claim = readClaim(workerKey, runId)
      if claim and releasePoolShare(base, claim.pooled) then publish(base, {type = "poolReleased"}) end
    end
  end
  local holding = redis.call("HGET", workerKey, "holding")
  if holding and redis.call("HGET", base .. "holds", holding) == name then
    redis.call("HDEL", base .. "holds", holding)
  end
  redis.call("DEL", workerKey, workerKey .. ":capacity", workerKey .. ":free", workerKey .. ":runs",
    workerKey .. ":devices", claimsKey(workerKey))
  redis.call("ZREM", base .. "workers", name)
  publish(base, {type = "workerLost", worker = name})
end
