#!lua
--[[
  Cancels a run. A staged run is canceled at once; for a running run the
  cancellation is requested from its worker, which stops the process and
  records the run as canceled.

  KEYS[1] run   hash (its BullMQ job)

  ARGV[1] base, ARGV[2] runId, ARGV[3] logMaxLines

  A staged run it cancels ends now by the Redis server's clock.

  Returns {code, status}: CODE.ok canceled, CODE.requested from the worker,
  CODE.unchanged already ended (status tells how), CODE.unknownRun no such run.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing is canceled, the user is told so.
]]
-- @include batchState
-- @include serverNow
-- @include storedShape
-- @include unstage
-- @include endRun
-- @include publish
local runKey = KEYS[1]
local base, runId = ARGV[1], ARGV[2]

local run = redis.call("HMGET", runKey, "status", "worker", "batch")
local status = run[1]
-- (A run of a batch not committed is not there yet.)
if not status or batchState(base, run[3]) then return {CODE.unknownRun, ""} end
if status == "staged" then
  unstage(base, runId, storedShape(runKey))
  endRun(base, runId, "canceled", serverNow(), "canceled while staged", ARGV[3])
  return {CODE.ok, "canceled"}
end
if status == "running" then
  redis.call("HSET", runKey, "cancelRequested", "1")
  publish(base, {type = "cancel", runId = runId, worker = run[2]})
  return {CODE.requested, status}
end
return {CODE.unchanged, status}
