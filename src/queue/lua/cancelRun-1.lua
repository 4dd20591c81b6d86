--[[
  Cancels a run. A staged run is canceled at once; for a running run the
  cancellation is requested from its worker, which stops the process and
  records the run as canceled.

  KEYS[1] run   hash (its BullMQ job)

  ARGV[1] base, ARGV[2] runId, ARGV[3] now, ARGV[4] logMaxLines

  Returns {code, status}: 1 canceled, 2 requested from the worker,
  0 already ended (status tells how), -1 no such run.
]]
-- @include runs
local base, runId, now = ARGV[1], ARGV[2], ARGV[3]

local run = redis.call("HMGET", KEYS[1], "status", "worker")
local status = run[1]
if not status then return {-1, ""} end
if status == "staged" then
  unstage(base, runId, storedShape(KEYS[1]))
  endRun(base, runId, "canceled", now, "canceled while staged", ARGV[4])
  return {1, "canceled"}
end
if status == "running" then
  redis.call("HSET", KEYS[1], "cancelRequested", "1")
  publish(base, {type = "cancel", runId = runId, worker = run[2]})
  return {2, status}
end
return {0, status}
