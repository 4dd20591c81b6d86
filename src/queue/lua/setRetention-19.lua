#!lua
--[[
  Changes the namespace's history retention (see includes/retention/).
  A field set to "" goes back to its default; a settings hash left empty
  is gone, and a namespace left empty with it is forgotten entirely.
  Removing the runs now beyond the new limits is `cleanRuns`' work.

  KEYS[1]  settings    hash: keepCompleted, keepFailed, keepAgeMs
  KEYS[2..17] what its includes touch, each named at its top: seq, ids,
  KEYS[18] fair-share    hash: fair share's settings (includes/fairshare/)
  KEYS[19] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  batches, arrays, arrays:tally, workers, pool:capacity, pool:used,
  reconcile, stats, dependents-pending, runs:events, runs:meta, runs:id,
  runs:pc, runs:marker

  ARGV[1] base; ARGV[2..] field, value pairs: a count or age in ms
  (validated by the caller), "off" for no limit, "" for the default

  Returns the settings as stored now, a flat list of fields and values.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include namespace/forgetIfEmpty
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
local base = ARGV[1]
local fields = {keepCompleted = true, keepFailed = true, keepAgeMs = true}

for i = 2, #ARGV - 1, 2 do
  if not fields[ARGV[i]] then return redis.error_reply("unknown retention setting " .. ARGV[i]) end
end
for i = 2, #ARGV - 1, 2 do
  if ARGV[i + 1] == "" then
    redis.call("HDEL", settingsKey, ARGV[i])
  else
    redis.call("HSET", settingsKey, ARGV[i], ARGV[i + 1])
  end
end
forgetIfEmpty(base)
return redis.call("HGETALL", settingsKey)
