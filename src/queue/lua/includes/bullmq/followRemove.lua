-- @include bullmq/deleteJob
-- @include lifecycle/dropRunKeys
-- @include lifecycle/unorderGoneRun

-- Reconciling (see reconcileRuns), BullMQ removed a run's job (job.remove,
-- clean, drain, obliterate): fitq forgets the run: its id, its place in the
-- order index, hold, output and whatever is left of its job. Its entry in
-- the fit index, if any, is for the sweep (followIndex) that a call which
-- forgot runs starts: with the job gone, nothing says which shape held it,
-- and looking in every shape would cost a call per shape for each run. The
-- runs depending on it are left to be judged (a dependency removed can
-- never be met). `r` is the reconciling call (see followJob).
local function followRemove(r, runId)
  local base = r.base
  if redis.call("SCARD", KEY.dependents(base, runId)) > 0 then
    redis.call("HSET", KEY.dependentsPending(base), runId, "0")
  end
  redis.call("ZREM", KEY.ids(base), runId)
  unorderGoneRun(base, runId)
  redis.call("HDEL", KEY.holds(base), runId)
  deleteJob(base, runId)
  dropRunKeys(base, runId)
  r.act("forgotten", runId)
end
