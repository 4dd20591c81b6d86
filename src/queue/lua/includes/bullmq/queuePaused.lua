-- Whether the namespace's queue is paused (BullMQ's pause, or `fitq pause`):
-- as for BullMQ, any value of the field pauses it.
local function queuePaused(base)
  return redis.call("HEXISTS", KEY.queueMeta(base), "paused") == 1
end
