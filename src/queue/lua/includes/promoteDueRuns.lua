-- @include jobKey
-- @include queueKey
-- @include tryCall
-- @include placeStaged

-- Moves up to `limit` runs whose begin time has come from BullMQ's
-- `delayed` into the fit index (as BullMQ's moveToActive promotes due
-- delayed jobs). A job there that is no staged fitq run is left for
-- reconcileRuns. Returns how many it moved and the ms until the next begin
-- time (-1: none left).
local function promoteDueRuns(base, now, limit)
  local delayedKey = queueKey(base, "delayed")
  local due = redis.call("ZRANGEBYSCORE", delayedKey, "-inf", string.format("%.0f", (now + 1) * 4096 - 1), "LIMIT", 0, limit)
  local moved = 0
  for _, runId in ipairs(due) do
    local run = tryCall("HMGET", jobKey(base, runId), "status", "beginAt") or {}
    if run[1] == "staged" and run[2] then
      redis.call("HDEL", jobKey(base, runId), "beginAt")
      if placeStaged(base, runId, now) == "staged" then moved = moved + 1 end
    end
  end
  local next = redis.call("ZRANGE", delayedKey, 0, 0, "WITHSCORES")[2]
  return moved, next and math.max(0, math.floor(tonumber(next) / 4096) - now) or -1
end
