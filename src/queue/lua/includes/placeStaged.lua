-- @include jobKey
-- @include queueKey
-- @include tryCall
-- @include emitEvent
-- @include dequeueJob
-- @include parkedState
-- @include stage
-- @include unstage

-- Puts a staged run where it belongs now. A run that may start goes into
-- the fit index (staged:<shape>, BullMQ's prioritized) at its own score, so
-- at its original place in the order. Any other is parked, out of the
-- index: one that begins later in BullMQ's `delayed` (score begin time *
-- 4096 + its seq mod 4096, BullMQ's encoding), a held one or one waiting
-- for dependencies in BullMQ's `waiting-children` (score: its seq), each
-- with BullMQ's event when it moves there. Returns where it went:
-- "staged", "delayed", "held" or "deps".
local function placeStaged(base, runId, now)
  local key = jobKey(base, runId)
  local run = redis.call("HMGET", key, "shape", "score", "seq")
  local shape, score, seq = run[1] or "none", run[2], tonumber(run[3] or "0")
  local state, beginAt = parkedState(base, runId, now)
  local delayedKey, childrenKey = queueKey(base, "delayed"), queueKey(base, "waiting-children")
  local indexed = tryCall("ZSCORE", base .. "staged:" .. shape, runId)
  if state == nil then
    local prev
    if redis.call("ZREM", delayedKey, runId) == 1 then prev = "delayed" end
    if redis.call("ZREM", childrenKey, runId) == 1 then prev = "waiting-children" end
    redis.call("HDEL", key, "beginAt")
    if not indexed then
      redis.call("HSET", key, "delay", 0)
      stage(base, runId, shape, score, prev)
    end
    return "staged"
  end
  if indexed then unstage(base, runId, shape) else dequeueJob(base, runId) end
  if state == "delayed" then
    redis.call("ZREM", childrenKey, runId)
    local delayedScore = string.format("%.0f", beginAt * 4096 + seq % 4096)
    if tonumber(redis.call("ZSCORE", delayedKey, runId) or "") ~= tonumber(delayedScore) then
      redis.call("ZADD", delayedKey, delayedScore, runId)
      redis.call("HSET", key, "delay", string.format("%.0f", beginAt - now))
      emitEvent(base, "event", "delayed", "jobId", runId, "delay", string.format("%.0f", beginAt))
    end
  else
    redis.call("ZREM", delayedKey, runId)
    if redis.call("ZADD", childrenKey, seq, runId) == 1 then
      emitEvent(base, "event", "waiting-children", "jobId", runId)
    end
  end
  return state
end
