#!lua flags=no-writes
--[[
  Reads what fitq's /metrics shows of a namespace, in one step, so every
  number of a scrape describes the same moment: runs by status, staged runs
  by demand shape, each registered worker's capacity, free amounts and GPU
  devices, the pool, and the run statistics the scripts that start and end
  runs keep (includes/stats/runTimeBounds.lua). Writes nothing.

  Its cost grows with the groups of shapes and the workers; it counts the
  runs of at most ARGV[2] shapes, however many are staged
  (includes/shape/stagedShapes.lua); the other counts are cardinalities.
  The runs whose status their queue state does not tell (held or parked in
  waiting-children; failed, canceled, lost, rejected and timeout, which
  share `failed`) are counted apart, a part at a time
  (countRunStatuses-*.lua).

  KEYS[1]  workers        zset: worker name -> lease deadline
  KEYS[2]  pool:capacity  hash: cluster-wide resource -> total amount
  KEYS[3]  pool:used      hash: cluster-wide resource -> amount reserved
  KEYS[4]  groups         hash: group of shapes with staged runs -> version
  KEYS[5]  stats          hash: run statistics (includes/stats/runTimeBounds.lua)
  KEYS[6..10] what its includes touch, each named at its top: runs:active,
  runs:prioritized, runs:delayed, runs:completed, runs:meta
  (and, per worker, worker:<name> with :capacity, :free, :devices and :runs;
  per shape group, group:<names> and staged:<shape>)

  ARGV[1] base
  ARGV[2] most shapes whose staged runs it counts

  Returns {now, paused, statuses, shapes, workers, poolCapacity, poolUsed,
  stats, waitBounds, durationBounds, stagedTotal}:
    now         the Redis server's clock, epoch ms
    paused      1 when the namespace's queue is paused
    statuses    flat status, count: staged (prioritized and delayed), running,
                completed (the runs of waiting-children and failed are not
                in these: countRunStatuses counts them)
    shapes      flat shape, staged runs in its index, for at most ARGV[2]
                shapes (stagedShapes)
    workers     one list per registered worker: {name, host, heartbeatAt,
                alive (1: its lease holds), drained (1/0), holding (1: it holds
                resources for a blocked head), running runs, concurrency,
                capacity, free, devices, gpus, runs}, capacity, free and
                devices flat name, amount (devices: GPU index, free share);
                gpus its probe's hash; runs flat run id, what its claim
                reserved, what it used so far (its `usage`, "" if none) and
                who staged it (its `user`, "" if none) for each of its
                running runs
    poolCapacity, poolUsed, stats   flat hashes
    waitBounds, durationBounds      the bucket bounds (ms) of the statistics
    stagedTotal staged runs in the whole fit index, every shape's included

  Flags: no-writes: it only reads, so it runs while Redis is out of memory
  and on a read-only replica, for a Redis user allowed to read only.
]]
-- @include bullmq/queuePaused
-- @include bullmq/runCounts
-- @include shape/stagedShapes
-- @include workers/liveWorker
-- @include stats/runTimeBounds
-- @include namespace/serverNow
-- @include namespace/tryCall
-- @include namespace/validName
local workersKey = KEYS[1]
local poolCapacityKey = KEYS[2]
local poolUsedKey = KEYS[3]
local groupsKey = KEYS[4]
local statsKey = KEYS[5]
-- (Touched by its includes.)
local queueActiveKey = KEYS[6]
local queuePrioritizedKey = KEYS[7]
local queueDelayedKey = KEYS[8]
local queueCompletedKey = KEYS[9]
local queueMetaKey = KEYS[10]
local base = ARGV[1]
local mostShapes = tonumber(ARGV[2])
local now = serverNow()
local statuses = runCounts(base)

-- (stagedShapes reads groups, and the first shapes of each group.)
local shapes, stagedTotal = {}, 0
if redis.call("EXISTS", groupsKey) == 1 then shapes, stagedTotal = stagedShapes(base, mostShapes) end

-- A worker's running runs: id, what its claim reserved, what it used so far, who staged it.
local function runsOf(name)
  local runs = {}
  for _, runId in ipairs(tryCall("SMEMBERS", KEY.workerRuns(base, name)) or {}) do
    local run = validName(runId) and tryCall("HMGET", KEY.run(base, runId), "reserved", "usage", "user")
    if run then
      runs[#runs + 1] = runId
      runs[#runs + 1] = run[1] or ""
      runs[#runs + 1] = run[2] or ""
      runs[#runs + 1] = run[3] or ""
    end
  end
  return runs
end

local workers = {}
for _, name in ipairs(redis.call("ZRANGE", workersKey, 0, -1)) do
  local info = validName(name) and tryCall("HMGET", KEY.worker(base, name), "host", "heartbeatAt", "drained", "holding", "concurrency")
  if info then
    workers[#workers + 1] = {
      name, info[1] or "", info[2] or "0", liveWorker(workersKey, name, now) and 1 or 0,
      info[3] and 1 or 0, info[4] and 1 or 0, tryCall("SCARD", KEY.workerRuns(base, name)) or 0, info[5] or "0",
      tryCall("HGETALL", KEY.workerCapacity(base, name)) or {}, tryCall("HGETALL", KEY.workerFree(base, name)) or {},
      tryCall("HGETALL", KEY.workerDevices(base, name)) or {}, tryCall("HGETALL", KEY.workerGpus(base, name)) or {},
      runsOf(name),
    }
  end
end

return {
  now, queuePaused(base) and 1 or 0, statuses, shapes, workers,
  redis.call("HGETALL", poolCapacityKey), redis.call("HGETALL", poolUsedKey), redis.call("HGETALL", statsKey),
  runTimeBounds("wait"), runTimeBounds("duration"), stagedTotal,
}
