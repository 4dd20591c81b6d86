#!lua
--[[
  Cancels a run. A staged run is canceled at once; for a running run the
  cancellation is requested from its worker, which stops the process and
  records the run as canceled.

  KEYS[1]  runs:<runId>  hash (its BullMQ job)
  KEYS[2..22] what its includes touch, each named at its top: ids, groups,
  KEYS[23] fair-share    hash: fair share's settings (includes/fairshare/, accrueUsage)
  KEYS[24] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  KEYS[25] admins        set: admins, whose requests may cancel any signed run (includes/requests/)
  batches, arrays, arrays:tally, holds, pool:capacity, pool:used, settings,
  notify:outbox, stats, dependents-pending, runs:wait, runs:active,
  runs:prioritized, runs:delayed, runs:waiting-children, runs:completed,
  runs:failed, runs:events, runs:meta

  ARGV[1] base, ARGV[2] runId, ARGV[3] logMaxLines, ARGV[4] the request
  ("<by> <at> <signature>", or ""): a run its user signed is canceled only
  at the request of its user or an admin (includes/requests/admitRequest.lua)

  A staged run it cancels ends now by the Redis server's clock.

  Returns {code, status}: CODE.ok canceled, CODE.requested from the worker,
  CODE.unchanged already ended (status tells how), CODE.unknownRun no such run,
  CODE.notYours refused ("cancel <runId> <its user>").

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing is canceled, the user is told so.
]]
-- @include batches/batchState
-- @include namespace/serverNow
-- @include shape/storedShape
-- @include shape/unstage
-- @include lifecycle/endRun
-- @include namespace/publish
-- @include requests/admitRequest
local runKey = KEYS[1]
-- (Touched by its includes.)
local idsKey = KEYS[2]
local groupsKey = KEYS[3]
local batchesKey = KEYS[4]
local arraysKey = KEYS[5]
local arrayTallyKey = KEYS[6]
local holdsKey = KEYS[7]
local poolCapacityKey = KEYS[8]
local poolUsedKey = KEYS[9]
local settingsKey = KEYS[10]
local notifyOutboxKey = KEYS[11]
local statsKey = KEYS[12]
local dependentsPendingKey = KEYS[13]
local queueWaitKey = KEYS[14]
local queueActiveKey = KEYS[15]
local queuePrioritizedKey = KEYS[16]
local queueDelayedKey = KEYS[17]
local queueWaitingChildrenKey = KEYS[18]
local queueCompletedKey = KEYS[19]
local queueFailedKey = KEYS[20]
local queueEventsKey = KEYS[21]
local queueMetaKey = KEYS[22]
-- (Touched by its includes.)
local fairShareKey = KEYS[23]
local fairUsageKey = KEYS[24]
local adminsKey = KEYS[25]
local base, runId = ARGV[1], ARGV[2]

local run = redis.call("HMGET", runKey, "status", "worker", "batch")
local status = run[1]
-- (A run of a batch not committed is not there yet.)
if not status or batchState(base, run[3]) then return {CODE.unknownRun, ""} end
if status == "staged" or status == "running" then
  local owner = admitRequest(base, runId, "cancel", ARGV[4])
  if owner then return {CODE.notYours, "cancel " .. runId .. " " .. owner} end
end
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
