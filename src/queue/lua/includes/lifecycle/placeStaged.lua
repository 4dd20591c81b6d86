-- @include bullmq/clearJobDelay
-- @include bullmq/delayJob
-- @include bullmq/dequeueJob
-- @include bullmq/parkJob
-- @include bullmq/unparkJob
-- @include lifecycle/parkedState
-- @include namespace/tryCall
-- @include shape/stage
-- @include shape/unstage

-- Puts a staged run where it belongs now. A run that may start goes into
-- the fit index (staged:<shape>, BullMQ's prioritized) at its own score, so
-- at its original place in the order. Any other is parked, out of the
-- index: one that begins later in BullMQ's delayed (delayJob), a held one
-- or one waiting for dependencies in BullMQ's waiting-children (parkJob),
-- each with BullMQ's event when it moves there. Returns where it went:
-- "staged", "delayed", "held" or "deps".
local function placeStaged(base, runId, now)
  local key = KEY.run(base, runId)
  local run = redis.call("HMGET", key, "shape", "score", "seq")
  local shape, score, seq = run[1] or "none", run[2], tonumber(run[3] or "0")
  local state, beginAt = parkedState(base, runId, now)
  local indexed = tryCall("ZSCORE", KEY.staged(base, shape), runId)
  if state == nil then
    local prev = unparkJob(base, runId)
    redis.call("HDEL", key, "beginAt")
    if not indexed then
      clearJobDelay(base, runId)
      stage(base, runId, shape, score, prev)
    end
    return "staged"
  end
  if indexed then unstage(base, runId, shape) else dequeueJob(base, runId) end
  if state == "delayed" then
    delayJob(base, runId, beginAt, seq, now)
  else
    parkJob(base, runId, seq)
  end
  return state
end
