-- BullMQ's job metrics, which Queue.getMetrics("completed" | "failed")
-- reads: `<queue>:metrics:<state>` holds the count of jobs that ended so,
-- and the count and time at the last data point; its `:data` list holds one
-- point per minute, newest first: how many ended in that minute, for a week.
local METRIC_POINTS = 10080
local METRIC_MINUTE_MS = 60000

local function countEnded(base, state, now)
  local metaKey = KEY.queueMetrics(base, state)
  local before = redis.call("HINCRBY", metaKey, "count", 1) - 1
  local last = redis.call("HMGET", metaKey, "prevTS", "prevCount")
  if not last[1] then
    redis.call("HSET", metaKey, "prevTS", now, "prevCount", 0)
    return
  end
  local minutes = math.floor(now / METRIC_MINUTE_MS) - math.floor(tonumber(last[1]) / METRIC_MINUTE_MS)
  if minutes <= 0 then return end
  minutes = math.min(minutes, METRIC_POINTS)
  -- The minute of the last point gets what ended since; the minutes after it, none.
  local dataKey = KEY.queueMetricsData(base, state)
  redis.call("LPUSH", dataKey, before - tonumber(last[2] or "0"))
  local idle = {}
  for i = 1, minutes - 1 do idle[i] = 0 end
  for from = 1, #idle, 1000 do
    redis.call("LPUSH", dataKey, unpack(idle, from, math.min(from + 999, #idle)))
  end
  redis.call("LTRIM", dataKey, 0, METRIC_POINTS - 1)
  redis.call("HSET", metaKey, "prevCount", before, "prevTS", now)
end
