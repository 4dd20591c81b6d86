-- @include enqueueJob

-- Puts a run in the staged index of its shape and in BullMQ's staged order.
local function stage(base, runId, shape, score, prev)
  redis.call("ZADD", base .. "staged:" .. shape, score, runId)
  redis.call("SADD", base .. "shapes", shape)
  enqueueJob(base, runId, score, prev)
end
