-- Reconciling (see reconcileRuns), BullMQ rewrote what a run is
-- (job.updateData, which emits no event): its job's `data` is put back from
-- fitq's own copy (`runData`), which is what fitq runs, shows, indexes and
-- verifies a signature against, so the change never took effect. `data` and
-- `runData` as its job holds them; `status` the run's, for the action.
local function followUpdateData(r, runId, status, data, runData)
  if not runData or data == runData then return end
  redis.call("HSET", KEY.run(r.base, runId), "data", runData)
  r.act("dataKept", runId, status)
end
