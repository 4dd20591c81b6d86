-- @include bullmq/followJob

-- Reconciling (see reconcileRuns), looks at the jobs of the queue's wait
-- list, which fitq never uses, as far as the call's budget goes (one at
-- least), with followJob.
local function followWaitList(r)
  for _, runId in ipairs(redis.call("LRANGE", KEY.queueWait(r.base), 0, math.max(math.floor(r.work), 1) - 1)) do
    followJob(r, runId)
  end
end
