-- @include dequeueJob

-- Removes a staged run from its shape's index, dropping the shape when empty.
local function unstage(base, runId, shape)
  local stagedKey = base .. "staged:" .. shape
  redis.call("ZREM", stagedKey, runId)
  if redis.call("ZCARD", stagedKey) == 0 then redis.call("SREM", base .. "shapes", shape) end
  redis.call("HDEL", base .. "holds", runId)
  dequeueJob(base, runId)
end
