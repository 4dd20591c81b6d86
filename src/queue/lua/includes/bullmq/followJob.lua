-- @include bullmq/followAdd
-- @include bullmq/followChangePriority
-- @include bullmq/followPromote
-- @include bullmq/followRemove
-- @include bullmq/followRetry
-- @include bullmq/followUpdateData
-- @include bullmq/takeWaitingJob
-- @include lifecycle/isEnded
-- @include namespace/tryCall

-- Reconciling (reconcileRuns) looks at one job, and follows what BullMQ's
-- API did to it: removed (followRemove; a job fitq never knew leaves the
-- waiting states), added without fitq's data (followAdd), data rewritten
-- (followUpdateData, then on as below), parked run moved (followPromote),
-- staged run's priority or place changed (followChangePriority), ended run
-- retried (followRetry). `r` is the call: `base`, `logMaxLines`, `work` (its
-- budget, one less per job looked at) and `act(kind, runId, detail)`, which
-- records what it did.
local function followJob(r, runId)
  r.work = r.work - 1
  local base = r.base
  local key = KEY.run(base, runId)
  local known = redis.call("ZSCORE", KEY.ids(base), runId) ~= false
  if redis.call("EXISTS", key) == 0 then
    if known then followRemove(r, runId) else takeWaitingJob(base, runId) end
    return
  end
  -- A key that holds no hash is no job: not fitq's to look at.
  local job = tryCall("HMGET", key, "status", "shape", "finishedOn", "held", "beginAt", "waitDeps", "data", "runData")
  if not job then return end
  local status = job[1]
  if not known or not status or not job[2] then return followAdd(r, runId, known) end
  followUpdateData(r, runId, status, job[7], job[8])
  if status == "staged" and (job[4] or job[5] or job[6]) then return followPromote(r, runId, job[5], job[4] or job[6]) end
  if status == "staged" then return followChangePriority(r, runId) end
  if isEnded(status) and not job[3] then return followRetry(r, runId, status) end
end
