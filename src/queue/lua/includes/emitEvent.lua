-- @include queueKey

-- Appends one entry to the queue's event stream (what QueueEvents reads),
-- trimmed as BullMQ trims it.
local function emitEvent(base, ...)
  local maxEvents = redis.call("HGET", queueKey(base, "meta"), "opts.maxLenEvents") or 10000
  redis.call("XADD", queueKey(base, "events"), "MAXLEN", "~", maxEvents, "*", ...)
end
