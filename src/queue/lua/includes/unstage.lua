-- @include dequeueJob
-- @include indexShape

-- Removes a staged run from its shape's index (see indexShape for its group).
local function unstage(base, runId, shape)
  redis.call("ZREM", base .. "staged:" .. shape, runId)
  indexShape(base, shape)
  redis.call("HDEL", base .. "holds", runId)
  dequeueJob(base, runId)
end
