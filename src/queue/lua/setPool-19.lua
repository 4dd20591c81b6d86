#!lua
--[[
  Sets the capacity of cluster-wide pool resources (shared by every worker of
  the namespace), or removes them. Amounts in use are tracked apart, so a
  pool can shrink below its use: no new run takes from it until enough is
  returned.

  KEYS[1]  pool:capacity  hash: cluster-wide resource -> total amount
  KEYS[2]  pool:used      hash: cluster-wide resource -> amount reserved by running runs
  KEYS[3..17] what its includes touch, each named at its top: seq, ids,
  KEYS[18] fair-share    hash: fair share's settings (includes/fairshare/)
  KEYS[19] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  batches, arrays, arrays:tally, workers, settings, reconcile, stats,
  dependents-pending, runs:events, runs:meta, runs:id, runs:pc, runs:marker

  ARGV[1] base; ARGV[2] "set" or "remove"; then for set: name, amount pairs;
  for remove: names.

  An array's limit (`array.<id>`, see includes/arrays/arrayOfLimit.lua) is set only
  while the array has staged or running runs, and removed only once it has
  none (it goes with the array's last run anyway).

  Returns {CODE.ok}; {CODE.arrayNotGoing, name} (set: an array's limit, the
  array ended or unknown); for remove, {CODE.notInPool, name} when a name
  is not in the pool, {CODE.arrayGoing, name} for the limit of an array
  that still has staged or running runs. Nothing is changed when refused.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include namespace/publish
-- @include namespace/forgetIfEmpty
-- @include arrays/arrayOfLimit
-- @include arrays/arrayGoing
-- @include arrays/unparkArray
local poolCapacityKey = KEYS[1]
local poolUsedKey = KEYS[2]
-- (Touched by its includes.)
local seqKey = KEYS[3]
local idsKey = KEYS[4]
local batchesKey = KEYS[5]
local arraysKey = KEYS[6]
local arrayTallyKey = KEYS[7]
local workersKey = KEYS[8]
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

if action == "set" then
  for i = 3, #ARGV, 2 do
    local array = arrayOfLimit(ARGV[i])
    if array and not arrayGoing(base, array) then return {CODE.arrayNotGoing, ARGV[i]} end
  end
  for i = 3, #ARGV, 2 do
    redis.call("HSET", poolCapacityKey, ARGV[i], ARGV[i + 1])
    -- (A limit raised: runs of the array may start.)
    local array = arrayOfLimit(ARGV[i])
    if array then unparkArray(base, array) end
  end
else
  for i = 3, #ARGV do
    if redis.call("HEXISTS", poolCapacityKey, ARGV[i]) == 0 then return {CODE.notInPool, ARGV[i]} end
    local array = arrayOfLimit(ARGV[i])
    if array and arrayGoing(base, array) then return {CODE.arrayGoing, ARGV[i]} end
  end
  for i = 3, #ARGV do redis.call("HDEL", poolCapacityKey, ARGV[i]) end
end
-- Drop usage entries that are back to zero, to keep redis-cli output tidy.
local used = redis.call("HGETALL", poolUsedKey)
for i = 1, #used, 2 do
  if used[i + 1] == "0" then redis.call("HDEL", poolUsedKey, used[i]) end
end
if action ~= "set" then forgetIfEmpty(base) end
publish(base, {type = "pool"})
return {CODE.ok}
