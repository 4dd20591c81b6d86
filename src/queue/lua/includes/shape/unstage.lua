-- @include bullmq/unqueueJob
-- @include shape/indexShape

-- Removes a staged run from its shape's index (see indexShape for its group)
-- and its job from BullMQ's staged order, or, if it was parked (see
-- placeStaged), from BullMQ's delayed or waiting-children (unqueueJob).
local function unstage(base, runId, shape)
  redis.call("ZREM", KEY.staged(base, shape), runId)
  indexShape(base, shape)
  redis.call("HDEL", KEY.holds(base), runId)
  unqueueJob(base, runId)
end
