-- @include bullmq/deleteJob
-- @include lifecycle/dropRunKeys
-- @include lifecycle/unorderGoneRun
-- @include shape/allShapes
-- @include shape/indexShape
-- @include namespace/tryCall

-- Reconciling (see reconcileRuns), BullMQ removed a run's job (job.remove,
-- clean, drain, obliterate): fitq forgets the run: its id, its place in the
-- order index, staged index entries, hold, output and whatever is left of its job. The runs depending
-- on it are left to be judged (a dependency removed can never be met).
-- `r` is the reconciling call (see followJob).
local function followRemove(r, runId)
  local base = r.base
  if redis.call("SCARD", KEY.dependents(base, runId)) > 0 then
    redis.call("HSET", KEY.dependentsPending(base), runId, "0")
  end
  redis.call("ZREM", KEY.ids(base), runId)
  unorderGoneRun(base, runId)
  for _, shape in ipairs(allShapes(base)) do
    -- (A key written by hand that is no sorted set is left alone.)
    if tryCall("ZREM", KEY.staged(base, shape), runId) == 1 then indexShape(base, shape) end
  end
  redis.call("HDEL", KEY.holds(base), runId)
  deleteJob(base, runId)
  dropRunKeys(base, runId)
  r.act("forgotten", runId)
end
