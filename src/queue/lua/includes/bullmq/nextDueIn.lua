-- Ms from `now` until the first job of BullMQ's delayed is due (0 if it is
-- already), or -1 when none is delayed.
local function nextDueIn(base, now)
  local next = redis.call("ZRANGE", KEY.queueDelayed(base), 0, 0, "WITHSCORES")[2]
  return next and math.max(0, math.floor(tonumber(next) / 4096) - now) or -1
end
