-- @include dequeueJob
-- @include indexShape
-- @include queueKey

-- Removes a staged run from its shape's index (see indexShape for its group),
-- or, if it was parked (see placeStaged), from BullMQ's delayed or
-- waiting-children.
local function unstage(base, runId, shape)
  redis.call("ZREM", base .. "staged:" .. shape, runId)
  indexShape(base, shape)
  redis.call("HDEL", base .. "holds", runId)
  dequeueJob(base, runId)
  redis.call("ZREM", queueKey(base, "delayed"), runId)
  redis.call("ZREM", queueKey(base, "waiting-children"), runId)
end
