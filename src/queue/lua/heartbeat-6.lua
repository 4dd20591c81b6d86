#!lua flags=allow-oom
--[[
  Renews a worker's lease, and the locks of its runs' jobs with it.

  KEYS[1]  workers                 zset: worker name -> lease deadline
  KEYS[2]  worker:<name>           hash
  KEYS[3]  worker:<name>:runs      set of the worker's running run ids
  KEYS[4]  worker:<name>:reserved  hash: run id -> what its claim reserved (JSON)
  KEYS[5..6] what its includes touch, each named at its top: groups,
  runs:prioritized

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] leaseMs
  (the new deadline is the Redis server's clock + leaseMs)

  Returns {CODE.ok, cancelIds, stopRequested, held, drained, preempting}: the worker's runs whose
  cancellation was requested, or whose job is gone or no longer this
  worker's running run (deleted from BullMQ under it: the worker stops it),
  "graceful", "now" or "" (safety nets for missed cancel and stop messages),
  and every run Redis holds for the worker with its claim epoch (runId,
  epoch, ...: the worker gives back a claim whose reply it never received),
  and 1 when the worker is drained (`fitq drain`, remembered for a
  re-registration), else 0, and the runs a claim preempted (runId, forRun,
  ...: a safety net for a claim reply the worker never received);
  or {CODE.fenced} when the worker is not registered under this token, or its lease
  has lapsed (fenced).

  Flags: allow-oom: it runs while Redis is out of memory (maxmemory
  reached), or a full Redis would let the leases of live workers lapse and
  their running runs be reaped as lost. It adds nothing: it rewrites the
  deadline of a worker already in `workers`, its `heartbeatAt` and the
  expiry of locks that exist (and the status of a run of its put back as
  staged by hand, whose forged index entries it removes).
]]
-- @include bullmq/extendLock
-- @include namespace/serverNow
-- @include workers/holdsLease
-- @include lifecycle/keepReplayedRunning
-- @include claims/readClaim
-- @include lifecycle/readRun
local workersKey = KEYS[1]
local workerKey = KEYS[2]
local workerRunsKey = KEYS[3]
local workerReservedKey = KEYS[4]
-- (Touched by its includes.)
local groupsKey = KEYS[5]
local queuePrioritizedKey = KEYS[6]
local base, name, token = ARGV[1], ARGV[2], ARGV[3]

-- A lapsed lease is not revived: claimRun already treats the worker as gone.
if not holdsLease(workerKey, workersKey, name, token) then return {CODE.fenced} end
local now = serverNow()
redis.call("ZADD", workersKey, now + tonumber(ARGV[4]), name)
redis.call("HSET", workerKey, "heartbeatAt", now)
local cancels, held, preempting = {}, {}, {}
for _, runId in ipairs(redis.call("SMEMBERS", workerRunsKey)) do
  local run = readRun(base, runId, "status", "worker", "epoch", "cancelRequested")
  if run then
    local claim = readClaim(workerReservedKey, runId)
    -- Put back as staged by hand while it runs here: it keeps running (see keepReplayedRunning).
    if keepReplayedRunning(base, runId, run, name, claim and claim.epoch) then run[1] = "running" end
    held[#held + 1] = runId
    held[#held + 1] = claim and claim.epoch or run[3] or ""
    -- Its job's lock lasts as long as the lease.
    extendLock(base, runId, token, ARGV[4])
    if run[4] == "1" or run[1] ~= "running" or run[2] ~= name then
      cancels[#cancels + 1] = runId
    elseif claim and claim.preempting then
      preempting[#preempting + 1] = runId
      preempting[#preempting + 1] = tostring(claim.preempting)
    end
  else
    -- Written by hand (no run id, or its key holds no job hash): no claim put it there.
    redis.call("SREM", workerRunsKey, runId)
    redis.log(redis.LOG_WARNING, "fitq heartbeat dropped a member of " .. workerRunsKey .. " that is no run id whose key holds a job hash")
  end
end
return {CODE.ok, cancels, redis.call("HGET", workerKey, "stopRequested") or "", held, redis.call("HEXISTS", workerKey, "drained"), preempting}
