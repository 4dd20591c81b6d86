#!lua
--[[
  Removes a stopping worker. Runs it still holds (none after a graceful stop
  whose ends were recorded) end as lost, or are re-staged per their retries
  (a run with a pending cancellation ends canceled);
  the reason says whether the worker stopped while holding its lease or had
  already lost it (its late ends were refused).

  KEYS[1]  workers                 zset: worker name -> lease deadline
  KEYS[2]  worker:<name>           hash
  KEYS[3]  worker:<name>:capacity  hash: resource -> total amount
  KEYS[4]  worker:<name>:free      hash: resource -> free amount
  KEYS[5]  worker:<name>:runs      set of the worker's running run ids
  KEYS[6]  worker:<name>:devices   hash: GPU device index -> free share (1 = whole device)
  KEYS[7]  worker:<name>:reserved  hash: run id -> what its claim reserved (JSON)
  KEYS[8..33] what its includes touch, each named at its top: seq, ids,
  KEYS[34] fair-share    hash: fair share's settings (includes/fairshare/, accrueUsage)
  KEYS[35] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  groups, batches, arrays, arrays:tally, holds, pool:capacity, pool:used,
  settings, notify:outbox, reconcile, stats, dependents-pending, runs:wait,
  runs:active, runs:prioritized, runs:delayed, runs:waiting-children,
  runs:completed, runs:failed, runs:events, runs:meta, runs:id, runs:pc,
  runs:marker

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] logMaxLines

  Runs end now by the Redis server's clock (or when the worker was last seen).

  Returns CODE.ok, or CODE.unchanged when the worker is not registered under this token.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): the worker is reaped once its lease has run out and
  Redis has room again.
]]
-- @include namespace/serverNow
-- @include workers/holdsLease
-- @include workers/leaseLapsedReason
-- @include workers/lastSeenAlive
-- @include workers/reapWorker
-- @include namespace/forgetIfEmpty
local workersKey = KEYS[1]
local workerKey = KEYS[2]
local workerCapacityKey = KEYS[3]
local workerFreeKey = KEYS[4]
local workerRunsKey = KEYS[5]
local workerDevicesKey = KEYS[6]
local workerReservedKey = KEYS[7]
-- (Touched by its includes.)
local seqKey = KEYS[8]
local idsKey = KEYS[9]
local groupsKey = KEYS[10]
local batchesKey = KEYS[11]
local arraysKey = KEYS[12]
local arrayTallyKey = KEYS[13]
local holdsKey = KEYS[14]
local poolCapacityKey = KEYS[15]
local poolUsedKey = KEYS[16]
local settingsKey = KEYS[17]
local notifyOutboxKey = KEYS[18]
local reconcileKey = KEYS[19]
local statsKey = KEYS[20]
local dependentsPendingKey = KEYS[21]
local queueWaitKey = KEYS[22]
local queueActiveKey = KEYS[23]
local queuePrioritizedKey = KEYS[24]
local queueDelayedKey = KEYS[25]
local queueWaitingChildrenKey = KEYS[26]
local queueCompletedKey = KEYS[27]
local queueFailedKey = KEYS[28]
local queueEventsKey = KEYS[29]
local queueMetaKey = KEYS[30]
local queueIdKey = KEYS[31]
local queuePcKey = KEYS[32]
local queueMarkerKey = KEYS[33]
-- (Touched by its includes.)
local fairShareKey = KEYS[34]
local fairUsageKey = KEYS[35]
local base, name, token = ARGV[1], ARGV[2], ARGV[3]

if redis.call("HGET", workerKey, "token") ~= token then return CODE.unchanged end
if holdsLease(workerKey, workersKey, name, token) then
  reapWorker(base, name, serverNow(), "worker " .. name .. " stopped", ARGV[4])
else
  -- Its lease ran out before it could stop: its runs ended when it was last seen.
  reapWorker(base, name, lastSeenAlive(base, name, serverNow()), leaseLapsedReason(name), ARGV[4])
end
forgetIfEmpty(base)
return CODE.ok
