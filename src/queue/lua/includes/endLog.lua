-- @include jobKey

-- Marks the end of a run's log stream, so followers know to stop.
local function endLog(base, runId, status, logMaxLines)
  redis.call("XADD", jobKey(base, runId) .. ":output", "MAXLEN", "~", logMaxLines, "*",
    "event", "end", "status", status)
end
