#!lua
--[[
  `fitq notify set URL` / `fitq notify rm`: sets or clears the namespace's
  notification URL, the `notifyUrl` field of its `settings` hash (workers
  POST a run's record there when it ends, unless the run has its own
  --notify URL). Workers hear of it by pub/sub (`notify`) and read it again
  at their poll besides. A settings hash left empty is gone, and a
  namespace left empty with it is forgotten entirely.

  KEYS[1]  settings    hash (field notifyUrl)
  KEYS[2..17] what its includes touch, each named at its top: seq, ids,
  KEYS[18] fair-share    hash: fair share's settings (includes/fairshare/)
  KEYS[19] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  batches, arrays, arrays:tally, workers, pool:capacity, pool:used,
  reconcile, stats, dependents-pending, runs:events, runs:meta, runs:id,
  runs:pc, runs:marker

  ARGV[1] base; ARGV[2] the URL (validated by the caller), "" to clear it

  Returns CODE.ok when it changed, CODE.unchanged when it already was so.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include namespace/forgetIfEmpty
-- @include namespace/publish
local settingsKey = KEYS[1]
-- (Touched by its includes.)
local seqKey = KEYS[2]
local idsKey = KEYS[3]
local batchesKey = KEYS[4]
local arraysKey = KEYS[5]
local arrayTallyKey = KEYS[6]
local workersKey = KEYS[7]
local poolCapacityKey = KEYS[8]
local poolUsedKey = KEYS[9]
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
local base, url = ARGV[1], ARGV[2]

local was = redis.call("HGET", settingsKey, "notifyUrl")
if (was or "") == url then return CODE.unchanged end
if url == "" then
  redis.call("HDEL", settingsKey, "notifyUrl")
  forgetIfEmpty(base)
else
  redis.call("HSET", settingsKey, "notifyUrl", url)
end
publish(base, {type = "notify"})
return CODE.ok
