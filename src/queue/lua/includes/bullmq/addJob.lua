-- @include bullmq/bullPriority
-- @include bullmq/emitEvent

-- Writes a new job as BullMQ's add does, with BullMQ's `added` event: its
-- name ("run"), `data` (the run, JSON text), `opts` (its priority, one
-- attempt: fitq retries on its own), `timestamp` (when it was staged),
-- `delay` 0 and `priority` (fitq's, as BullMQ's: bullPriority). Where it
-- waits is for the caller (enqueueJob, or a parked state).
local function addJob(base, runId, data, priority, now)
  local bull = bullPriority(priority)
  redis.call("HSET", KEY.run(base, runId), "name", "run", "data", data,
    "opts", cjson.encode({priority = bull, attempts = 1}), "timestamp", now, "delay", 0, "priority", bull)
  emitEvent(base, "added", runId, "name", "run")
end
