-- Up to `limit` jobs of BullMQ's delayed whose begin time (score / 4096, see
-- delayJob) has come by `now`, oldest first.
local function dueJobs(base, now, limit)
  return redis.call("ZRANGEBYSCORE", KEY.queueDelayed(base), "-inf", string.format("%.0f", (now + 1) * 4096 - 1),
    "LIMIT", 0, limit)
end
