#!lua flags=allow-oom
--[[
  Removes runs of a batch its stager gives up (a chunk was refused, or it
  could not commit), in bounded calls: each run of the list that is still
  staged in that batch goes, as if never staged. With `last`, the batch
  leaves `batches` too. A batch no longer in `batches` (committed: its
  stager lost the commit's reply) loses nothing. A namespace left empty is
  forgotten entirely.

  KEYS[1]  batches     hash: open batch id -> "deadline count"
  KEYS[2..26] what its includes touch, each named at its top: seq, ids,
  KEYS[27] fair-share    hash: fair share's settings (includes/fairshare/)
  KEYS[28] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  groups, arrays, arrays:tally, workers, holds, pool:capacity, pool:used,
  settings, reconcile, stats, dependents-pending, runs:wait, runs:active,
  runs:prioritized, runs:delayed, runs:waiting-children, runs:completed,
  runs:failed, runs:events, runs:meta, runs:id, runs:pc, runs:marker

  ARGV[1] base, ARGV[2] batch id, ARGV[3] last ("1" or "0"), ARGV[4..] run ids

  Returns {CODE.ok, count removed}.

  Flags: allow-oom: it only deletes, and a chunk refused while Redis is out
  of memory must not leave the chunks before it behind.
]]
-- @include shape/storedShape
-- @include shape/unstage
-- @include lifecycle/removeRun
-- @include batches/batchRunGone
-- @include batches/batchState
-- @include namespace/forgetIfEmpty
local batchesKey = KEYS[1]
-- (Touched by its includes.)
local seqKey = KEYS[2]
local idsKey = KEYS[3]
local groupsKey = KEYS[4]
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
local base, batch, last = ARGV[1], ARGV[2], ARGV[3] == "1"

if not batchState(base, batch) then return {CODE.ok, 0} end
local removed = 0
for i = 4, #ARGV do
  local runId = ARGV[i]
  local runKey = KEY.run(base, runId)
  local run = redis.call("HMGET", runKey, "status", "batch")
  if run[1] == "staged" and run[2] == batch then
    unstage(base, runId, storedShape(runKey))
    removeRun(base, runId, "staged")
    batchRunGone(base, batch)
    removed = removed + 1
  end
end
if last then redis.call("HDEL", batchesKey, batch) end
forgetIfEmpty(base)
return {CODE.ok, removed}
