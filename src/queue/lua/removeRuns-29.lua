#!lua
--[[
  Removes runs and their logs, all or nothing. Running runs are refused:
  cancel them first. A namespace left empty is forgotten entirely. Runs
  that wait for a removed staged run can never start: they end canceled
  (or stay parked, if kept), see includes/lifecycle/removeWithDependents.lua.

  KEYS[1]  ids         zset of every run id, score 0 (removeRun takes each id out)
  KEYS[2..26] what its includes touch, each named at its top: seq, groups,
  KEYS[27] fair-share    hash: fair share's settings (includes/fairshare/)
  KEYS[28] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  batches, arrays, arrays:tally, workers, holds, pool:capacity, pool:used,
  settings, reconcile, stats, dependents-pending, runs:wait, runs:active,
  runs:prioritized, runs:delayed, runs:waiting-children, runs:completed,
  runs:failed, runs:events, runs:meta, runs:id, runs:pc, runs:marker
  KEYS[29] admins        set: admins, whose requests may remove any signed run (includes/requests/)

  ARGV[1] base; ARGV[2..] pairs of a run id and the request for it ("<by>
  <at> <signature>", or ""): a run its user signed is removed only at the
  request of its user or an admin (includes/requests/requestRefusal.lua)

  Returns {CODE.ok, count}, {CODE.unknownRun, id}, {CODE.runRunning, id}
  or {CODE.notYours, "rm <id> <its user>"}.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include batches/batchState
-- @include shape/storedShape
-- @include shape/unstage
-- @include lifecycle/removeRun
-- @include lifecycle/removeWithDependents
-- @include namespace/serverNow
-- @include namespace/forgetIfEmpty
-- @include requests/requestRefusal
local idsKey = KEYS[1]
-- (Touched by its includes.)
local seqKey = KEYS[2]
local groupsKey = KEYS[3]
local batchesKey = KEYS[4]
local arraysKey = KEYS[5]
local arrayTallyKey = KEYS[6]
local workersKey = KEYS[7]
local holdsKey = KEYS[8]
local poolCapacityKey = KEYS[9]
local poolUsedKey = KEYS[10]
local settingsKey = KEYS[11]
local reconcileKey = KEYS[12]
local statsKey = KEYS[13]
local dependentsPendingKey = KEYS[14]
local queueWaitKey = KEYS[15]
local queueActiveKey = KEYS[16]
local queuePrioritizedKey = KEYS[17]
local queueDelayedKey = KEYS[18]
local queueWaitingChildrenKey = KEYS[19]
local queueCompletedKey = KEYS[20]
local queueFailedKey = KEYS[21]
local queueEventsKey = KEYS[22]
local queueMetaKey = KEYS[23]
local queueIdKey = KEYS[24]
local queuePcKey = KEYS[25]
local queueMarkerKey = KEYS[26]
-- (Touched by its includes.)
local fairShareKey = KEYS[27]
local fairUsageKey = KEYS[28]
local adminsKey = KEYS[29]
local base = ARGV[1]

for i = 2, #ARGV, 2 do
  local run = redis.call("HMGET", KEY.run(base, ARGV[i]), "status", "batch")
  local status = run[1]
  -- (A run of a batch not committed is not there yet.)
  if not status or batchState(base, run[2]) then return {CODE.unknownRun, ARGV[i]} end
  if status == "running" then return {CODE.runRunning, ARGV[i]} end
  local owner = requestRefusal(base, ARGV[i], ARGV[i + 1])
  if owner then return {CODE.notYours, "rm " .. ARGV[i] .. " " .. owner} end
end
for i = 2, #ARGV, 2 do
  local runId = ARGV[i]
  local runKey = KEY.run(base, runId)
  local status = redis.call("HGET", runKey, "status")
  if status == "staged" then
    unstage(base, runId, storedShape(runKey))
    removeWithDependents(base, runId, status, serverNow(), 1000, 100)
  else
    removeRun(base, runId, status)
  end
end
forgetIfEmpty(base)
return {CODE.ok, (#ARGV - 1) / 2}
