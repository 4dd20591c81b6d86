-- Takes a parked job out of delayed and waiting-children, as it goes back to
-- the staged order; returns the state it was in ("delayed",
-- "waiting-children"), or nil.
local function unparkJob(base, runId)
  local prev
  if redis.call("ZREM", KEY.queueDelayed(base), runId) == 1 then prev = "delayed" end
  if redis.call("ZREM", KEY.queueWaitingChildren(base), runId) == 1 then prev = "waiting-children" end
  return prev
end
