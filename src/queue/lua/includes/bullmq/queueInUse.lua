-- Whether the queue has an event stream or waiting jobs (prioritized, wait,
-- delayed) at all.
local function queueInUse(base)
  return redis.call("EXISTS", KEY.queueEvents(base), KEY.queuePrioritized(base), KEY.queueWait(base),
    KEY.queueDelayed(base)) > 0
end
