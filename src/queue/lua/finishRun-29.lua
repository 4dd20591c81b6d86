#!lua
--[[
  Records the end of a run and releases what it reserved. Only the current
  claim of a live registration may: the run must still be running under this
  worker and epoch, and the worker registered under this token with a lease
  that has not run out (server clock). Anything else is a late writer (a
  worker cut off past its lease, an older claim) and changes nothing; the
  reaper ends such a run.

  A run its worker terminated because the worker was stopped (status
  "stopped") did not fail: after its worker's share is released it ends
  canceled if its cancellation was requested (reason "canceled (<reason>)";
  the worker had not acted on it yet), else goes back to staged at its place
  if it has retries left (using one), else ends lost, with the given reason.

  A run its worker could not start for want of its own means (status
  "returned": out of file descriptors) did not fail either: it goes back to
  staged at its place without spending a retry (canceled if its
  cancellation was requested).

  A run its worker stopped because a claim preempted it (status
  "preempted", includes/preemption/) did not fail either: it goes back to
  staged at its place without spending a retry, its attempt recorded as
  preempted (canceled if its cancellation was requested).

  A run that failed on its own (status failed, or timeout if staged with
  --retry-on-timeout) and was staged with --retry-on-failure goes back to
  staged, after its backoff, at its place in the order, while it has
  retries left (includes/lifecycle/retryFailedRun.lua): the decision is made here.
  A run that ends judges the runs depending on it (see endRun).

  KEYS[1]  runs:<runId>            hash (its BullMQ job)
  KEYS[2]  worker:<name>           hash
  KEYS[3]  worker:<name>:free      hash: resource -> free amount
  KEYS[4]  worker:<name>:runs      set of the worker's running run ids
  KEYS[5]  worker:<name>:devices   hash: GPU device index -> free share (1 = whole device)
  KEYS[6]  workers                 zset: worker name -> lease deadline
  KEYS[7]  worker:<name>:reserved  hash: run id -> what its claim reserved (JSON)
  KEYS[8..27] what its includes touch, each named at its top: ids, groups,
  KEYS[28] fair-share    hash: fair share's settings (includes/fairshare/, accrueUsage)
  KEYS[29] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  arrays, arrays:tally, holds, pool:capacity, pool:used, settings,
  notify:outbox, stats, dependents-pending, runs:wait, runs:active,
  runs:prioritized, runs:delayed, runs:waiting-children, runs:completed,
  runs:failed, runs:events, runs:meta

  What the claim reserved (the worker share, its devices, the pool share) is
  given back from the worker's record of the claim, whose epoch must match.
  A run whose job hash is gone, or no longer this claim's (deleted from
  BullMQ under it: obliterate with force, clean of an active job whose lock
  lapsed), records nothing, but its claim's reservation is given back all
  the same.

  ARGV[1] base, ARGV[2] runId, ARGV[3] worker name, ARGV[4] token, ARGV[5] epoch,
  ARGV[6] status (completed|failed|canceled|rejected|timeout|stopped|returned|preempted), ARGV[7] exitCode ("" if none),
  ARGV[8] signal ("" if none), ARGV[9] reason, ARGV[10] logMaxLines,
  ARGV[11] what the run used (model/run-usage.ts, JSON; "" if not measured):
  kept as its `usage`, and with its attempt when it is re-staged

  The run ends now by the Redis server's clock (its job's finishedOn).

  Returns {CODE.ok, status recorded} (a stopped run: "canceled", "staged" or "lost";
  a failed run retried: "staged");
  {CODE.unchanged, the run's status ("" if it is gone)} when the run has moved on (what
  this claim reserved is given back, if still held);
  {CODE.fenced, ""} when the worker is not registered under this token or its lease
  has run out. Nothing else changes unless it returns CODE.ok.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): the run stays running, its reservation held, until
  its end is recorded.
]]
-- @include namespace/serverNow
-- @include workers/holdsLease
-- @include claims/readClaim
-- @include claims/releaseWorkerShare
-- @include claims/releasePoolShare
-- @include namespace/publish
-- @include lifecycle/endRun
-- @include lifecycle/settleAbandonedRun
-- @include lifecycle/retryFailedRun
-- @include lifecycle/keepReplayedRunning
local runKey = KEYS[1]
local workerKey = KEYS[2]
local workerFreeKey = KEYS[3]
local workerRunsKey = KEYS[4]
local workerDevicesKey = KEYS[5]
local workersKey = KEYS[6]
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
local queueWaitKey = KEYS[19]
local queueActiveKey = KEYS[20]
local queuePrioritizedKey = KEYS[21]
local queueDelayedKey = KEYS[22]
local queueWaitingChildrenKey = KEYS[23]
local queueCompletedKey = KEYS[24]
local queueFailedKey = KEYS[25]
local queueEventsKey = KEYS[26]
local queueMetaKey = KEYS[27]
-- (Touched by its includes.)
local fairShareKey = KEYS[28]
local fairUsageKey = KEYS[29]
local base, runId, workerName, token, epoch = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local status, exitCode, signal, reason = ARGV[6], ARGV[7], ARGV[8], ARGV[9]

if not holdsLease(workerKey, workersKey, workerName, token) then return {CODE.fenced, ""} end
local run = redis.call("HMGET", runKey, "status", "worker", "epoch", "reserved", "devices", "deviceShare")
local claim = readClaim(workerReservedKey, runId)
if claim and claim.epoch ~= epoch then claim = nil end
-- Put back as staged by hand while it ran under this claim: its end is this claim's to record.
if claim and keepReplayedRunning(base, runId, run, workerName, epoch) then run[1] = "running" end

-- The claim is over: forget it here.
local function dropClaim()
  redis.call("HDEL", workerReservedKey, runId)
  redis.call("HINCRBY", workerKey, "running", -1)
  redis.call("SREM", workerRunsKey, runId)
end

if run[1] ~= "running" or run[2] ~= workerName or run[3] ~= epoch then
  -- Its job was deleted (or replaced) under this claim: what the claim
  -- reserved comes back from the worker's record of it.
  if claim then
    releaseWorkerShare(workerFreeKey, workerDevicesKey, claim.reserved, claim.devices, claim.deviceShare)
    if releasePoolShare(base, claim.pooled, claim.charged, not run[1]) then publish(base, {type = "poolReleased"}) end
    dropClaim()
  end
  return {CODE.unchanged, run[1] or ""}
end

-- The worker's share, as the claim recorded it (a claim made before the
-- worker kept its record: as the run's job hash holds it). The pool's share
-- goes back in endRun or restageRun.
if claim then
  releaseWorkerShare(workerFreeKey, workerDevicesKey, claim.reserved, claim.devices, claim.deviceShare)
else
  releaseWorkerShare(workerFreeKey, workerDevicesKey, run[4], run[5], run[6])
end
dropClaim()

if ARGV[11] ~= "" then redis.call("HSET", runKey, "usage", ARGV[11]) end
local restaged = {stopped = "lost", returned = "unstarted", preempted = "preempted"}
if restaged[status] then
  return {CODE.ok, settleAbandonedRun(base, runId, reason, serverNow(), ARGV[10], restaged[status])}
end
if retryFailedRun(base, runId, status, exitCode, signal, reason, serverNow(), ARGV[10]) then return {CODE.ok, "staged"} end
if exitCode ~= "" then redis.call("HSET", runKey, "exitCode", exitCode) end
if signal ~= "" then redis.call("HSET", runKey, "signal", signal) end
endRun(base, runId, status, serverNow(), reason, ARGV[10], exitCode ~= "" and exitCode or "null")
return {CODE.ok, status}
