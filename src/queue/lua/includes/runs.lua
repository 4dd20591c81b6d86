-- Helpers shared by the scripts that move runs between states.
-- @include amounts
-- @include jobs
-- @include retention

-- A shape's demands ("a=1,b=2" or "none") and the GPU devices its runs are
-- pinned to ("gpu=1;gpus=0,3" -> "gpu=1", {"0", "3"}; none: {}).
local function splitShape(shape)
  local demands, pinned = string.match(shape, "^(.-);gpus=(.*)$")
  if not demands then return shape, {} end
  local devices = {}
  for id in string.gmatch(pinned, "[^,]+") do devices[#devices + 1] = id end
  return demands, devices
end

-- The staged-index shape of a stored run: its "shape" field.
local function storedShape(runKey)
  return redis.call("HGET", runKey, "shape") or "none"
end

-- How often a run may be re-staged: the `retries` of its job data (0 for data
-- fitq did not write).
local function retriesOf(runKey)
  local ok, data = pcall(cjson.decode, redis.call("HGET", runKey, "data") or "")
  if ok and type(data) == "table" then return tonumber(data.retries) or 0 end
  return 0
end

-- Puts a run in the staged index of its shape and in BullMQ's staged order.
local function stage(base, runId, shape, score, prev)
  redis.call("ZADD", base .. "staged:" .. shape, score, runId)
  redis.call("SADD", base .. "shapes", shape)
  enqueueJob(base, runId, score, prev)
end

-- Removes a staged run from its shape's index, dropping the shape when empty.
local function unstage(base, runId, shape)
  local stagedKey = base .. "staged:" .. shape
  redis.call("ZREM", stagedKey, runId)
  if redis.call("ZCARD", stagedKey) == 0 then redis.call("SREM", base .. "shapes", shape) end
  redis.call("HDEL", base .. "holds", runId)
  dequeueJob(base, runId)
end

-- Marks the end of a run's log stream, so followers know to stop.
local function endLog(base, runId, status, logMaxLines)
  redis.call("XADD", jobKey(base, runId) .. ":output", "MAXLEN", "~", logMaxLines, "*",
    "event", "end", "status", status)
end

local function publish(base, message)
  redis.call("PUBLISH", base .. "events", cjson.encode(message))
end

-- Ends a staged or running run: returns what it took from the pool, records
-- its end (BullMQ: completed or failed, see finishJob) and closes its log;
-- then applies the namespace's retention to the state it ended in (at most
-- RETENTION_BATCH runs removed, never this one). (Its worker's share is
-- released by the caller.) `returnValue` is the exit code
-- as JSON, for a completed run.
local function endRun(base, runId, status, now, reason, logMaxLines, returnValue)
  local runKey = jobKey(base, runId)
  local prev = redis.call("HGET", runKey, "status") == "staged" and "waiting" or "active"
  local pooled = parseResourceList(redis.call("HGET", runKey, "pooled"))
  adjustAmounts(base .. "pool:used", pooled, -1)
  if prev == "active" then deactivateJob(base, runId) end
  redis.call("HSET", runKey, "status", status)
  if reason ~= nil and reason ~= "" then redis.call("HSET", runKey, "reason", reason) end
  redis.call("HDEL", runKey, "cancelRequested")
  finishJob(base, runId, status, returnValue or "null", reason or "", now, prev)
  endLog(base, runId, status, logMaxLines)
  publish(base, {type = "ended", runId = runId, status = status})
  -- Pool capacity came back: workers waiting for it should look again.
  if #pooled > 0 then publish(base, {type = "poolReleased"}) end
  trimEndedRuns(base, status == "completed" and "completed" or "failed", RETENTION_BATCH, runId)
end

-- Puts a running run whose worker died back at its place in the order, if
-- it has retries left and no cancellation is pending for it; returns whether
-- it did. What it reserved goes back with the worker's keys and, for the
-- pool, here.
local function restageRun(base, runId, reason, logMaxLines)
  local runKey = jobKey(base, runId)
  local run = redis.call("HMGET", runKey, "restaged", "pooled", "score", "cancelRequested")
  local retries, restaged = retriesOf(runKey), tonumber(run[1] or "0")
  if restaged >= retries or run[4] == "1" then return false end
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

-- Settles a running run its worker no longer runs (the worker died, lost its
-- lease, stopped, restarted, or terminated it while stopping), for `reason`.
-- A run whose cancellation was requested ends canceled ("canceled (reason)"):
-- it is never run again. Else it is re-staged if it has retries left, or ends
-- lost. A run that ends, ends at endedAt, its pool share returned (its
-- worker's share goes with the worker's keys, or back in finishRun).
-- Returns the status it now has: "canceled", "staged" or "lost".
local function settleAbandonedRun(base, runId, reason, endedAt, logMaxLines)
  if redis.call("HGET", jobKey(base, runId), "cancelRequested") == "1" then
    endRun(base, runId, "canceled", endedAt, "canceled (" .. reason .. ")", logMaxLines)
    return "canceled"
  end
  if restageRun(base, runId, reason, logMaxLines) then return "staged" end
  endRun(base, runId, "lost", endedAt, reason, logMaxLines)
  return "lost"
end

-- When a dead worker was last known alive: its last heartbeat (server clock),
-- never later than now. Its lost runs end then, not when someone noticed.
local function lastSeenAlive(base, name, now)
  local heartbeatAt = tonumber(redis.call("HGET", base .. "worker:" .. name, "heartbeatAt") or "")
  if heartbeatAt == nil or heartbeatAt > tonumber(now) then return tonumber(now) end
  return heartbeatAt
end

-- Forgets a worker whose lease expired (or that restarts under the same
-- name, or stops): its running runs end as lost (canceled, if a cancellation
-- was pending; or are re-staged per their retries) at aliveAt (or at their
-- start, if later: a claim shows the worker alive too), its keys go.
local function reapWorker(base, name, aliveAt, reason, logMaxLines)
  local workerKey = base .. "worker:" .. name
  for _, runId in ipairs(redis.call("SMEMBERS", workerKey .. ":runs")) do
    local run = redis.call("HMGET", jobKey(base, runId), "status", "worker", "processedOn")
    if run[1] == "running" and run[2] == name then
      local endedAt = math.max(tonumber(aliveAt), tonumber(run[3] or "") or 0)
      settleAbandonedRun(base, runId, reason, string.format("%.0f", endedAt), logMaxLines)
    end
  end
  local holding = redis.call("HGET", workerKey, "holding")
  if holding and redis.call("HGET", base .. "holds", holding) == name then
    redis.call("HDEL", base .. "holds", holding)
  end
  redis.call("DEL", workerKey, workerKey .. ":capacity", workerKey .. ":free", workerKey .. ":runs",
    workerKey .. ":devices")
  redis.call("ZREM", base .. "workers", name)
  publish(base, {type = "workerLost", worker = name})
end
