-- @include bullmq/dropPrioritized
-- @include shape/indexShape
-- @include namespace/tryCall

-- A running run put back as staged by hand while its claim lives (a replay:
-- its job still names this worker and this claim's epoch, which every move
-- of fitq's to staged clears) is still running: it gets its status back,
-- and the entries put back for it leave its staged index and `prioritized`,
-- so its one copy goes on and its end is recorded, and no claim starts a
-- second. `run` holds its job's status, worker and epoch; returns whether
-- it was such a replay (its status is "running" again).
local function keepReplayedRunning(base, runId, run, worker, claimEpoch)
  if run[1] ~= "staged" or run[2] ~= worker or claimEpoch == nil or run[3] ~= claimEpoch then return false end
  local key = KEY.run(base, runId)
  redis.call("HSET", key, "status", "running")
  local shape = redis.call("HGET", key, "shape")
  if shape and tryCall("ZREM", KEY.staged(base, shape), runId) == 1 then indexShape(base, shape) end
  dropPrioritized(base, runId)
  redis.log(redis.LOG_WARNING, "fitq: run " .. runId .. " was put back as staged by hand while " .. worker .. " runs it; it keeps running")
  return true
end
