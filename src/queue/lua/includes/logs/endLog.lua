-- @include logs/packLog

-- Marks the end of a run's log, so readers see how it ended and followers
-- stop; then packs the log if it is short (followers of a packed log wake on
-- the run's end in the queue's event stream).
local function endLog(base, runId, status, logMaxLines)
  redis.call("XADD", KEY.runLog(base, runId), "MAXLEN", "~", logMaxLines, "*",
    "event", "end", "status", status)
  packLog(base, runId)
end
