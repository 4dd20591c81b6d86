#!lua
--[[
  Registers a worker with its capacity and a lease. A name held by a live
  worker is refused; a dead holder's leftovers are reaped first.

  KEYS[1]  workers                 zset: worker name -> lease deadline
  KEYS[2]  worker:<name>           hash: name, token, host, pid, startedAt, ...
  KEYS[3]  worker:<name>:capacity  hash: resource -> total amount
  KEYS[4]  worker:<name>:free      hash: resource -> free amount
  KEYS[5]  worker:<name>:runs      set of the worker's running run ids
  KEYS[6]  worker:<name>:devices   hash: GPU device index -> free share (1 = whole device)
  KEYS[7]  worker:<name>:reserved  hash: run id -> what its claim reserved (JSON)
  KEYS[8..28] what its includes touch, each named at its top: ids, groups,
  KEYS[29] fair-share    hash: fair share's settings (includes/fairshare/, accrueUsage)
  KEYS[30] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  arrays, arrays:tally, holds, pool:capacity, pool:used, settings,
  notify:outbox, stats, dependents-pending, runs, runs:wait, runs:active,
  runs:prioritized, runs:delayed, runs:waiting-children, runs:completed,
  runs:failed, runs:events, runs:meta

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] policy, ARGV[5] leaseMs,
  ARGV[6] concurrency, ARGV[7] host, ARGV[8] pid, ARGV[9] capacity ("a=1 b=2"),
  ARGV[10] logMaxLines,
  ARGV[11] GPU device indices ("0,1,3", or "" for none),
  ARGV[12] gpuPlacement ("pack" or "spread", shown to users judging why runs wait)
  ARGV[13] defaultTimeLimit, ARGV[14] maxTimeLimit (ms, "" for none: the
  limits its claims apply, kept for explainRuns and `fitq workers`)
  ARGV[15] "1" to register drained (a worker process registering again after
           `fitq drain`: see setDrained-3.lua), else ""
  ARGV[16] gpuProbe: how old its GPU probe's reading may be for a claim to
           place runs on its devices (ms: its probe interval x 2; "" when it
           does not probe). Its earlier readings went with its earlier
           registration (reapWorker): until its first, its devices take no run.
  ARGV[17] its devices that are MIG devices ("100,101", or ""): a run gets
           one at most, as CUDA shows a process one MIG device


  Lease deadlines use the Redis server's clock.

  Returns CODE.ok, CODE.workerNameTaken when a live worker holds the name,
  or CODE.olderLayout when the namespace holds runs stored by an older fitq.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): the worker does not start.
]]
-- @include namespace/serverNow
-- @include workers/leaseLapsedReason
-- @include workers/lastSeenAlive
-- @include workers/reapWorker
-- @include amounts/parseResourceList
-- @include amounts/formatAmount
-- @include namespace/publish
-- @include namespace/olderLayout
local workersKey = KEYS[1]
local workerKey = KEYS[2]
local workerCapacityKey = KEYS[3]
local workerFreeKey = KEYS[4]
local workerRunsKey = KEYS[5]
local workerDevicesKey = KEYS[6]
local workerReservedKey = KEYS[7]
-- (Touched by its includes.)
local idsKey = KEYS[8]
local groupsKey = KEYS[9]
local arraysKey = KEYS[10]
local arrayTallyKey = KEYS[11]
local holdsKey = KEYS[12]
local poolCapacityKey = KEYS[13]
local poolUsedKey = KEYS[14]
local settingsKey = KEYS[15]
local notifyOutboxKey = KEYS[16]
local statsKey = KEYS[17]
local dependentsPendingKey = KEYS[18]
local olderRunsKey = KEYS[19]
local queueWaitKey = KEYS[20]
local queueActiveKey = KEYS[21]
local queuePrioritizedKey = KEYS[22]
local queueDelayedKey = KEYS[23]
local queueWaitingChildrenKey = KEYS[24]
local queueCompletedKey = KEYS[25]
local queueFailedKey = KEYS[26]
local queueEventsKey = KEYS[27]
local queueMetaKey = KEYS[28]
-- (Touched by its includes.)
local fairShareKey = KEYS[29]
local fairUsageKey = KEYS[30]
local base, name, token, leaseMs = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[5])
if olderLayout(base) then return CODE.olderLayout end
local now = serverNow()

local deadline = redis.call("ZSCORE", workersKey, name)
if deadline and tonumber(deadline) > now then return CODE.workerNameTaken end
-- A lapsed registration (the worker died, or was cut off and is back) is
-- reaped as any reaper would; leftovers without a lease, as a restart. Its
-- runs ended when it was last seen alive.
if deadline then
  reapWorker(base, name, lastSeenAlive(base, name, now), leaseLapsedReason(name), ARGV[10])
elseif redis.call("EXISTS", workerKey) == 1 then
  reapWorker(base, name, lastSeenAlive(base, name, now), "worker " .. name .. " restarted", ARGV[10])
end

redis.call("HSET", workerKey, "name", name, "token", token, "host", ARGV[7], "pid", ARGV[8],
  "startedAt", now, "heartbeatAt", now, "leaseMs", leaseMs, "concurrency", ARGV[6],
  "running", 0, "resources", ARGV[9], "devices", ARGV[11],
  "policy", ARGV[4], "gpuPlacement", ARGV[12])
if ARGV[15] == "1" then redis.call("HSET", workerKey, "drained", now) end
for i, field in ipairs({"defaultTimeLimit", "maxTimeLimit"}) do
  local ms = ARGV[12 + i] or ""
  if ms ~= "" then redis.call("HSET", workerKey, field, ms) else redis.call("HDEL", workerKey, field) end
end
if (ARGV[16] or "") ~= "" then redis.call("HSET", workerKey, "gpuProbe", ARGV[16]) end
if (ARGV[17] or "") ~= "" then redis.call("HSET", workerKey, "mig", ARGV[17]) end
for _, item in ipairs(parseResourceList(ARGV[9])) do
  local amount = formatAmount(item[2])
  redis.call("HSET", workerCapacityKey, item[1], amount)
  redis.call("HSET", workerFreeKey, item[1], amount)
end
for id in string.gmatch(ARGV[11], "[^,]+") do
  redis.call("HSET", workerDevicesKey, id, "1")
end
redis.call("ZADD", workersKey, now + leaseMs, name)
publish(base, {type = "workerJoined", worker = name})
return CODE.ok
