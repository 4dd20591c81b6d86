-- @include bullmq/finishJob
-- @include bullmq/takeWaitingJob
-- @include lifecycle/orderRun
-- @include namespace/publish
-- @include namespace/serverNow
-- @include namespace/validName
-- @include retention/trimEndedRuns
-- @include stats/countRunEnd

-- Why reconciling rejects a job BullMQ added without fitq's run data.
local FOREIGN_REASON = "not a fitq run (added without fitq's run data)"
-- BullMQ's own key names: never a run id (see QUEUE_KEY_NAMES in names.ts).
local QUEUE_KEY_NAMES = {}
for _, suffix in ipairs({"active", "wait", "waiting-children", "paused", "id", "delayed", "prioritized",
    "stalled-check", "completed", "failed", "stalled", "repeat", "limiter", "meta", "events", "pc", "marker", "de"}) do
  QUEUE_KEY_NAMES[suffix] = true
end

-- Reconciling (see reconcileRuns), a waiting job that is no fitq run (added
-- through BullMQ's API, without fitq's run data, or not in `ids`): it ends
-- `rejected` as a failed job, never runs, and is listed by fitq (added to
-- `ids`, with a staging sequence number) when its id is one fitq accepts as
-- a run id (names.ts: validateNewRunId). `known`: whether `ids` holds it.
local function followAdd(r, runId, known)
  local base = r.base
  local prev = takeWaitingJob(base, runId)
  if not prev then return end
  local key = KEY.run(base, runId)
  if validName(runId) and not QUEUE_KEY_NAMES[runId] then
    if not known then redis.call("ZADD", KEY.ids(base), 0, runId) end
    if not redis.call("HGET", key, "seq") then redis.call("HSET", key, "seq", redis.call("INCR", KEY.seq(base))) end
    orderRun(base, runId, redis.call("HGET", key, "seq"))
  end
  redis.call("HSET", key, "status", "rejected", "reason", FOREIGN_REASON)
  local now = serverNow()
  countRunEnd(base, runId, "rejected", now)
  finishJob(base, runId, "rejected", "null", FOREIGN_REASON, now, prev)
  publish(base, {type = "ended", runId = runId, status = "rejected"})
  r.act("rejected", runId)
  trimEndedRuns(base, "failed", RETENTION_BATCH, runId)
end
