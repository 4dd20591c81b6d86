#!lua
--[[
  Reaps workers whose lease expired: their runs end as lost (or are
  re-staged per their retries; a run with a pending cancellation ends
  canceled), their reservations and keys go. Bounded work per call.

  KEYS[1]  workers     zset: worker name -> lease deadline
  KEYS[2..27] what its includes touch, each named at its top: seq, ids,
  KEYS[28] fair-share    hash: fair share's settings (includes/fairshare/, accrueUsage)
  KEYS[29] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  groups, batches, arrays, arrays:tally, holds, pool:capacity, pool:used,
  settings, notify:outbox, reconcile, stats, dependents-pending, runs:wait,
  runs:active, runs:prioritized, runs:delayed, runs:waiting-children,
  runs:completed, runs:failed, runs:events, runs:meta, runs:id, runs:pc,
  runs:marker

  ARGV[1] base, ARGV[2] limit, ARGV[3] logMaxLines

  Returns {reapedNames, msUntilNextDeadline}; the last is -1 when no worker
  is left. Time is the Redis server's clock.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): dead workers are reaped once it has room again.
]]
-- @include namespace/serverNow
-- @include workers/leaseLapsedReason
-- @include workers/lastSeenAlive
-- @include workers/reapWorker
-- @include namespace/forgetIfEmpty
local workersKey = KEYS[1]
-- (Touched by its includes.)
local seqKey = KEYS[2]
local idsKey = KEYS[3]
local groupsKey = KEYS[4]
local batchesKey = KEYS[5]
local arraysKey = KEYS[6]
local arrayTallyKey = KEYS[7]
local holdsKey = KEYS[8]
local poolCapacityKey = KEYS[9]
local poolUsedKey = KEYS[10]
local settingsKey = KEYS[11]
local notifyOutboxKey = KEYS[12]
local reconcileKey = KEYS[13]
local statsKey = KEYS[14]
local dependentsPendingKey = KEYS[15]
local queueWaitKey = KEYS[16]
local queueActiveKey = KEYS[17]
local queuePrioritizedKey = KEYS[18]
local queueDelayedKey = KEYS[19]
local queueWaitingChildrenKey = KEYS[20]
local queueCompletedKey = KEYS[21]
local queueFailedKey = KEYS[22]
local queueEventsKey = KEYS[23]
local queueMetaKey = KEYS[24]
local queueIdKey = KEYS[25]
local queuePcKey = KEYS[26]
local queueMarkerKey = KEYS[27]
-- (Touched by its includes.)
local fairShareKey = KEYS[28]
local fairUsageKey = KEYS[29]
local base = ARGV[1]
local now = serverNow()

local reaped = redis.call("ZRANGEBYSCORE", workersKey, "-inf", "(" .. now, "LIMIT", 0, tonumber(ARGV[2]))
for _, name in ipairs(reaped) do
  reapWorker(base, name, lastSeenAlive(base, name, now), leaseLapsedReason(name), ARGV[3])
end
if #reaped > 0 then forgetIfEmpty(base) end
local soonest = redis.call("ZRANGE", workersKey, 0, 0, "WITHSCORES")
return {reaped, soonest[2] and (tonumber(soonest[2]) - now) or -1}
