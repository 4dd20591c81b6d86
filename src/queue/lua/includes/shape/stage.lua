-- @include bullmq/enqueueJob
-- @include shape/indexShape

-- Puts a run in the staged index of its shape (and the shape in its group)
-- and in BullMQ's staged order.
local function stage(base, runId, shape, score, prev)
  redis.call("ZADD", KEY.staged(base, shape), score, runId)
  indexShape(base, shape)
  enqueueJob(base, runId, score, prev)
end
