-- @include bullmq/dueJobs
-- @include bullmq/nextDueIn
-- @include lifecycle/placeStaged
-- @include namespace/tryCall

-- Moves up to `limit` runs whose begin time has come from BullMQ's
-- delayed into the fit index (as BullMQ's moveToActive promotes due
-- delayed jobs). A job there that is no staged fitq run is left for
-- reconcileRuns. Returns how many it moved and the ms until the next begin
-- time (-1: none left).
local function promoteDueRuns(base, now, limit)
  local moved = 0
  for _, runId in ipairs(dueJobs(base, now, limit)) do
    local run = tryCall("HMGET", KEY.run(base, runId), "status", "beginAt") or {}
    if run[1] == "staged" and run[2] then
      redis.call("HDEL", KEY.run(base, runId), "beginAt")
      if placeStaged(base, runId, now) == "staged" then moved = moved + 1 end
    end
  end
  return moved, nextDueIn(base, now)
end
