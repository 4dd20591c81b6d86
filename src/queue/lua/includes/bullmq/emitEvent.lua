-- Appends an event to the queue's event stream (what QueueEvents reads), as
-- BullMQ writes it: `event`, then `jobId` (none for an event of the queue
-- itself: jobId nil), then the event's own fields, name and value; trimmed as
-- BullMQ trims it.
local function emitEvent(base, event, jobId, ...)
  local maxEvents = redis.call("HGET", KEY.queueMeta(base), "opts.maxLenEvents") or 10000
  if jobId == nil then
    redis.call("XADD", KEY.queueEvents(base), "MAXLEN", "~", maxEvents, "*", "event", event, ...)
  else
    redis.call("XADD", KEY.queueEvents(base), "MAXLEN", "~", maxEvents, "*", "event", event, "jobId", jobId, ...)
  end
end
