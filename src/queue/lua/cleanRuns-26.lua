#!lua
--[[
  Removes ended runs, as `fitq runs clean` selected them: each named run
  that has ended with one of the given statuses, no later than the given
  time, goes with its logs and keys. Any other (staged, running, already
  gone, another status, ended later) is left as it is, so a selection read
  a moment before is applied safely. A namespace left empty is forgotten
  entirely. The caller sends a bounded batch of ids per call.

  KEYS[1]  ids         zset of every run id, score 0 (removeRun takes each id out)
  KEYS[2..24] what its includes touch, each named at its top: seq, batches,
  KEYS[25] fair-share    hash: fair share's settings (includes/fairshare/)
  KEYS[26] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  arrays, arrays:tally, workers, pool:capacity, pool:used, settings,
  reconcile, stats, dependents-pending, runs:wait, runs:active,
  runs:prioritized, runs:delayed, runs:waiting-children, runs:completed,
  runs:failed, runs:events, runs:meta, runs:id, runs:pc, runs:marker

  ARGV[1] base; ARGV[2] statuses that may be removed, comma separated
  (completed, failed, canceled, lost, rejected, timeout); ARGV[3] the latest
  finishedOn to remove, epoch ms ("" for any); ARGV[4..] run ids

  Returns the number of runs removed.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include bullmq/jobFinishedAt
-- @include lifecycle/removeRun
-- @include namespace/forgetIfEmpty
local idsKey = KEYS[1]
-- (Touched by its includes.)
local seqKey = KEYS[2]
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
local queueWaitKey = KEYS[13]
local queueActiveKey = KEYS[14]
local queuePrioritizedKey = KEYS[15]
local queueDelayedKey = KEYS[16]
local queueWaitingChildrenKey = KEYS[17]
local queueCompletedKey = KEYS[18]
local queueFailedKey = KEYS[19]
local queueEventsKey = KEYS[20]
local queueMetaKey = KEYS[21]
local queueIdKey = KEYS[22]
local queuePcKey = KEYS[23]
local queueMarkerKey = KEYS[24]
-- (Touched by its includes.)
local fairShareKey = KEYS[25]
local fairUsageKey = KEYS[26]
local base, latest = ARGV[1], tonumber(ARGV[3])

local removable = {}
for status in string.gmatch(ARGV[2], "[^,]+") do
  if status ~= "staged" and status ~= "running" then removable[status] = true end
end

local removed = 0
for i = 4, #ARGV do
  local runId = ARGV[i]
  local status = redis.call("HGET", KEY.run(base, runId), "status")
  if status and removable[status] and (latest == nil or (tonumber(jobFinishedAt(base, runId)) or 0) <= latest) then
    removeRun(base, runId, status)
    removed = removed + 1
  end
end
if removed > 0 then forgetIfEmpty(base) end
return removed
