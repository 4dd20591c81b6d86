#!lua
--[[
  Pauses or resumes the namespace's queue, as BullMQ's Queue.pause() and
  resume() do (they pause the same queue): while paused, no worker claims a
  run of the namespace; running runs go on.

  KEYS[1..17] what its includes touch, each named at its top: seq, ids,
  KEYS[18] fair-share    hash: fair share's settings (includes/fairshare/)
  KEYS[19] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  batches, arrays, arrays:tally, workers, pool:capacity, pool:used,
  settings, reconcile, stats, dependents-pending, runs:events, runs:meta,
  runs:id, runs:pc, runs:marker

  ARGV[1] base; ARGV[2] "pause" or "resume"

  Returns CODE.ok when it changed something, CODE.unchanged when the queue already was so.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include bullmq/setQueuePaused
-- @include namespace/forgetIfEmpty
-- @include namespace/publish
-- (Touched by its includes.)
local seqKey = KEYS[1]
local idsKey = KEYS[2]
local batchesKey = KEYS[3]
local arraysKey = KEYS[4]
local arrayTallyKey = KEYS[5]
local workersKey = KEYS[6]
local poolCapacityKey = KEYS[7]
local poolUsedKey = KEYS[8]
local settingsKey = KEYS[9]
local reconcileKey = KEYS[10]
local statsKey = KEYS[11]
local dependentsPendingKey = KEYS[12]
local queueEventsKey = KEYS[13]
local queueMetaKey = KEYS[14]
local queueIdKey = KEYS[15]
local queuePcKey = KEYS[16]
local queueMarkerKey = KEYS[17]
-- (Touched by its includes.)
local fairShareKey = KEYS[18]
local fairUsageKey = KEYS[19]
local base, action = ARGV[1], ARGV[2]

if not setQueuePaused(base, action == "pause") then return CODE.unchanged end
if action ~= "pause" then
  -- Workers claim again at once.
  publish(base, {type = "resumed"})
  forgetIfEmpty(base)
end
return CODE.ok
