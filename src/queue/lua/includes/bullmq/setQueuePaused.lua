-- @include bullmq/emitEvent

-- Pauses the queue (`paused` in its meta, as BullMQ's pause does) or resumes
-- it, with BullMQ's `paused` or `resumed` event; false when it already was so.
local function setQueuePaused(base, paused)
  local metaKey = KEY.queueMeta(base)
  if paused == (redis.call("HEXISTS", metaKey, "paused") == 1) then return false end
  if paused then
    redis.call("HSET", metaKey, "paused", 1)
    emitEvent(base, "paused")
  else
    redis.call("HDEL", metaKey, "paused")
    emitEvent(base, "resumed")
  end
  return true
end
