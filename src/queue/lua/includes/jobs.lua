-- A run is a job of its namespace's BullMQ queue, `<base>runs` (prefix
-- `<base>` without its last colon, queue name "runs"): its hash is the job
-- hash, and its state is where BullMQ looks for it (prioritized, active,
-- completed, failed). These functions write that layout the way BullMQ's own
-- scripts do (test/contract pins every part of it), so BullMQ's Queue and
-- Job API, QueueEvents and Bull Board read fitq's runs as they are.

-- The keys of the queue, and of one job.
local function queueKey(base, suffix) return base .. "runs:" .. suffix end
local function jobKey(base, runId) return base .. "runs:" .. runId end

-- BullMQ ranks prioritized jobs by priority * 2^32 + a counter, lower first;
-- fitq's priority (+-1,000,000, higher first) maps to BullMQ's 1..2,000,001,
-- and its staging sequence is the counter. Exact in a double (< 2^53).
local PRIORITY_BASE = 1000001
local function bullPriority(priority) return PRIORITY_BASE - tonumber(priority) end
local function orderScore(priority, seq)
  return string.format("%.0f", bullPriority(priority) * 4294967296 + tonumber(seq))
end

-- Appends one entry to the queue's event stream (what QueueEvents reads),
-- trimmed as BullMQ trims it.
local function emitEvent(base, ...)
  local maxEvents = redis.call("HGET", queueKey(base, "meta"), "opts.maxLenEvents") or 10000
  redis.call("XADD", queueKey(base, "events"), "MAXLEN", "~", maxEvents, "*", ...)
end

-- Whether the namespace's queue is paused (BullMQ's pause, or `fitq pause`):
-- as for BullMQ, any value of the field pauses it.
local function queuePaused(base)
  return redis.call("HEXISTS", queueKey(base, "meta"), "paused") == 1
end

-- Puts a job in the staged order (BullMQ: prioritized), `prev` its former state.
local function enqueueJob(base, runId, score, prev)
  redis.call("ZADD", queueKey(base, "prioritized"), score, runId)
  if prev then
    emitEvent(base, "event", "waiting", "jobId", runId, "prev", prev)
  else
    emitEvent(base, "event", "waiting", "jobId", runId)
  end
end

-- Takes a staged job out of the staged order (prioritized, or a foreign
-- job's wait list).
local function dequeueJob(base, runId)
  if redis.call("ZREM", queueKey(base, "prioritized"), runId) == 0 then
    redis.call("LREM", queueKey(base, "wait"), 1, runId)
  end
end

-- Moves a claimed job to active under a lock that its worker renews with its
-- lease: BullMQ refuses to remove or clean a locked job.
local function activateJob(base, runId, workerName, lockToken, lockMs, now)
  local key = jobKey(base, runId)
  dequeueJob(base, runId)
  redis.call("LPUSH", queueKey(base, "active"), runId)
  redis.call("SET", key .. ":lock", lockToken, "PX", lockMs)
  redis.call("HSET", key, "processedOn", now, "pb", workerName)
  redis.call("HINCRBY", key, "ats", 1)
  emitEvent(base, "event", "active", "jobId", runId, "prev", "waiting")
end

-- Takes an active job out of active and drops its lock (it ends, or goes
-- back to staged).
local function deactivateJob(base, runId)
  redis.call("LREM", queueKey(base, "active"), -1, runId)
  redis.call("DEL", jobKey(base, runId) .. ":lock")
end

-- Records a job's end as BullMQ does: completed with the exit code as return
-- value, or failed with a failedReason starting with fitq's status ("lost:
-- worker w1 stopped renewing its lease"). `prev` is the state it ends from.
local function finishJob(base, runId, status, returnValue, reason, finishedOn, prev)
  local key = jobKey(base, runId)
  redis.call("HINCRBY", key, "atm", 1)
  if status == "completed" then
    redis.call("ZADD", queueKey(base, "completed"), finishedOn, runId)
    redis.call("HSET", key, "finishedOn", finishedOn, "returnvalue", returnValue)
    emitEvent(base, "event", "completed", "jobId", runId, "returnvalue", returnValue, "prev", prev)
    return
  end
  local failedReason = status .. ": " .. reason
  redis.call("ZADD", queueKey(base, "failed"), finishedOn, runId)
  redis.call("HSET", key, "finishedOn", finishedOn, "failedReason", failedReason)
  emitEvent(base, "event", "failed", "jobId", runId, "failedReason", failedReason, "prev", prev)
  -- fitq's own name for the end, for listeners that tell them apart.
  if status ~= "failed" then emitEvent(base, "event", status, "jobId", runId, "reason", reason) end
end

-- Deletes a job's keys (its hash, lock, output, BullMQ's logs list) and its
-- place in every state.
local function deleteJob(base, runId)
  local key = jobKey(base, runId)
  for _, state in ipairs({"prioritized", "completed", "failed"}) do
    redis.call("ZREM", queueKey(base, state), runId)
  end
  redis.call("LREM", queueKey(base, "wait"), 0, runId)
  redis.call("LREM", queueKey(base, "active"), 0, runId)
  redis.call("DEL", key, key .. ":lock", key .. ":logs", key .. ":output")
end
