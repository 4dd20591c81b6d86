-- @include bullmq/jobFinishedAt
-- @include bullmq/reopenJob
-- @include lifecycle/recordAttempt
-- @include logs/unpackLog
-- @include dependencies/depsState
-- @include lifecycle/runData
-- @include lifecycle/placeStaged
-- @include lifecycle/cancelParkedRun
-- @include arrays/tallyState
-- @include arrays/tallyArrayRun
-- @include quotas/tallyUserRun
-- @include arrays/restoreArrayLimit

-- Stages an ended run again (`fitq restart`), as a fresh attempt with the
-- same id, command, demands and labels, at its original place in the order
-- (its score is kept): the attempt that ended goes to its history
-- (recordAttempt), its end and claim fields go, its retry-on-failure budget
-- starts again, its packed output becomes a stream with a `restaged` entry.
-- Its own dependencies are judged again (they may never be met: it ends
-- canceled again, unless kept). Returns where it went (see placeStaged),
-- or "canceled"; and its array's cause when the runs waiting for the array
-- are to be judged again (it is open again in the array's tally).
local function reopenRun(base, runId, now, logMaxLines)
  local key = KEY.run(base, runId)
  local status = redis.call("HGET", key, "status")
  recordAttempt(base, runId, status, jobFinishedAt(base, runId) or now)
  reopenJob(base, runId)
  redis.call("HDEL", key, "worker", "devices", "deviceShare", "reserved", "pooled", "charged", "cancelRequested",
    "exitCode", "signal", "reason", "restaged", "restagedReason", "failures", "canceledFor", "beginAt", "held",
    "waitDeps", "depsNever", "usage")
  redis.call("HSET", key, "status", "staged")
  redis.call("HINCRBY", key, "restarted", 1)
  tallyUserRun(base, runId, tallyState(status), "open")
  local arrayCause = tallyArrayRun(base, runId, tallyState(status), "open")
  restoreArrayLimit(base, runId)
  unpackLog(base, runId, logMaxLines)
  redis.call("XADD", KEY.runLog(base, runId), "MAXLEN", "~", logMaxLines, "*", "event", "restaged",
    "reason", "restarted (it was " .. status .. ")")
  local state, detail, cause = depsState(base, runId)
  if state == "never" and runData(base, runId).keepIfDependencyFails ~= true then
    cancelParkedRun(base, runId, detail, cause, now, logMaxLines)
    return "canceled", arrayCause
  end
  if state ~= "met" then redis.call("HSET", key, "waitDeps", "1") end
  if state == "never" then redis.call("HSET", key, "depsNever", detail) end
  return placeStaged(base, runId, now), arrayCause
end
