-- How many runs are in the queue states whose size alone tells their fitq
-- status (for /metrics): staged (prioritized and delayed), running (active)
-- and completed. A flat list: status, count. Runs in waiting-children (held,
-- or staged and parked) and in failed (each ended status but completed) are
-- told apart by their job hashes, a part at a time, by countRunStatuses:
-- never all of them in one call.
local function runCounts(base)
  return {
    "staged", redis.call("ZCARD", KEY.queuePrioritized(base)) + redis.call("ZCARD", KEY.queueDelayed(base)),
    "running", redis.call("LLEN", KEY.queueActive(base)),
    "completed", redis.call("ZCARD", KEY.queueCompleted(base)),
  }
end
