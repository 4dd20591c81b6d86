-- @include arrays/restoreArrayLimit
-- @include arrays/tallyArrayRun
-- @include quotas/tallyUserRun
-- @include arrays/tallyState
-- @include bullmq/followChangePriority
-- @include bullmq/reopenJob
-- @include logs/unpackLog
-- @include namespace/publish

-- Reconciling (see reconcileRuns), BullMQ retried a run that had ended
-- (job.retry, retryJobs: its job waits again, without `finishedOn`): it is
-- staged again at its place in the order, with its demands, as a new
-- attempt (`restaged` reset, `retried` + 1), its packed output a stream
-- again, with a `restaged` entry; open again in its array's tally (the runs
-- waiting for the array are judged again); workers are told. `status`: the
-- status it had.
local function followRetry(r, runId, status)
  local base = r.base
  local key = KEY.run(base, runId)
  reopenJob(base, runId)
  redis.call("HDEL", key, "worker", "devices", "deviceShare", "reserved", "pooled", "charged", "cancelRequested",
    "exitCode", "signal", "reason", "restaged", "restagedReason", "usage")
  redis.call("HSET", key, "status", "staged")
  redis.call("HINCRBY", key, "retried", 1)
  tallyUserRun(base, runId, tallyState(status), "open")
  local arrayCause = tallyArrayRun(base, runId, tallyState(status), "open")
  if arrayCause then redis.call("HSET", KEY.dependentsPending(base), arrayCause, "0") end
  restoreArrayLimit(base, runId)
  local reason = "retried from BullMQ (it was " .. status .. ")"
  unpackLog(base, runId, r.logMaxLines)
  redis.call("XADD", KEY.runLog(base, runId), "MAXLEN", "~", r.logMaxLines, "*", "event", "restaged", "reason", reason)
  followChangePriority(r, runId)
  publish(base, {type = "staged", count = 1})
  r.act("retried", runId, status)
end
