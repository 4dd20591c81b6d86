#!lua flags=no-writes
--[[
  Reads what fitq's /metrics shows of a namespace, in one step, so every
  number of a scrape describes the same moment: runs by status, staged runs
  by demand shape, each registered worker's capacity, free amounts and GPU
  devices, the pool, and the run statistics the scripts that start and end
  runs keep (includes/runTimeBounds.lua). Writes nothing.

  Its cost grows with the runs held or waiting for dependencies and the
  ended runs kept in `failed` (each one's status is read: failed, canceled,
  lost, rejected and timeout share that set), the shapes and the workers;
  the other counts are cardinalities.

  KEYS[1]  workers              zset: worker name -> lease deadline
  KEYS[2]  pool:capacity        hash: cluster-wide resource -> total amount
  KEYS[3]  pool:used            hash: cluster-wide resource -> amount reserved
  KEYS[4]  groups               hash: group of shapes with staged runs -> version
  KEYS[5]  stats                hash: run statistics (includes/runTimeBounds.lua)
  KEYS[6]  runs:meta            BullMQ's queue settings (`paused`)
  KEYS[7]  runs:prioritized     zset: staged runs in the fit index
  KEYS[8]  runs:delayed         zset: staged runs that begin later
  KEYS[9]  runs:waiting-children  zset: held runs and runs waiting for dependencies
  KEYS[10] runs:active          list: running runs
  KEYS[11] runs:completed       zset: completed runs
  KEYS[12] runs:failed          zset: runs that ended any other way
  (and, per worker, worker:<name> with :capacity, :free, :devices and :runs;
  per shape group, group:<names> and staged:<shape>; the job hashes of the
  runs in waiting-children and failed)

  ARGV[1] base

  Returns {now, paused, statuses, shapes, workers, poolCapacity, poolUsed,
  stats, waitBounds, durationBounds}:
    now         the Redis server's clock, epoch ms
    paused      1 when the namespace's queue is paused
    statuses    flat status, count (staged, held, running, and each ended status)
    shapes      flat shape, staged runs in its index
    workers     one list per registered worker: {name, host, heartbeatAt,
                alive (1: its lease holds), drained (1/0), holding (1: it holds
                resources for a blocked head), running runs, concurrency,
                capacity, free, devices}, the last three flat name, amount
                (devices: GPU index, free share)
    poolCapacity, poolUsed, stats   flat hashes
    waitBounds, durationBounds      the bucket bounds (ms) of the statistics

  Flags: no-writes: it only reads, so it runs while Redis is out of memory
  and on a read-only replica, for a Redis user allowed to read only.
]]
-- @include allShapes
-- @include jobKey
-- @include liveWorker
-- @include runTimeBounds
-- @include serverNow
-- @include tryCall
-- @include validName
local workersKey = KEYS[1]
local poolCapacityKey = KEYS[2]
local poolUsedKey = KEYS[3]
local groupsKey = KEYS[4]
local statsKey = KEYS[5]
local metaKey = KEYS[6]
local prioritizedKey = KEYS[7]
local delayedKey = KEYS[8]
local parkedKey = KEYS[9]
local activeKey = KEYS[10]
local completedKey = KEYS[11]
local failedKey = KEYS[12]
local base = ARGV[1]
local now = serverNow()
local CHUNK = 1000

-- Each member of a sorted set, a chunk at a time (a long reply at once would hold much memory).
local function eachMember(key, visit)
  local from = 0
  repeat
    local ids = redis.call("ZRANGE", key, from, from + CHUNK - 1)
    for _, id in ipairs(ids) do visit(id) end
    from = from + CHUNK
  until #ids < CHUNK
end

local counts = {
  staged = redis.call("ZCARD", prioritizedKey) + redis.call("ZCARD", delayedKey),
  held = 0,
  running = redis.call("LLEN", activeKey),
  completed = redis.call("ZCARD", completedKey),
}
-- (A member written by hand, no run id or no job hash, counts as its set says.)
local function field(id, name)
  return validName(id) and tryCall("HGET", jobKey(base, id), name) or nil
end
eachMember(parkedKey, function(id)
  if field(id, "held") then counts.held = counts.held + 1 else counts.staged = counts.staged + 1 end
end)
eachMember(failedKey, function(id)
  local status = field(id, "status") or "failed"
  counts[status] = (counts[status] or 0) + 1
end)
local statuses = {}
for status, count in pairs(counts) do
  statuses[#statuses + 1] = status
  statuses[#statuses + 1] = count
end

local shapes = {}
-- (allShapes reads groups and each group's shapes.)
for _, shape in ipairs(redis.call("EXISTS", groupsKey) == 1 and allShapes(base) or {}) do
  shapes[#shapes + 1] = shape
  shapes[#shapes + 1] = tryCall("ZCARD", base .. "staged:" .. shape) or 0
end

local workers = {}
for _, name in ipairs(redis.call("ZRANGE", workersKey, 0, -1)) do
  local key = base .. "worker:" .. name
  local info = validName(name) and tryCall("HMGET", key, "host", "heartbeatAt", "drained", "holding", "concurrency")
  if info then
    workers[#workers + 1] = {
      name, info[1] or "", info[2] or "0", liveWorker(workersKey, name, now) and 1 or 0,
      info[3] and 1 or 0, info[4] and 1 or 0, tryCall("SCARD", key .. ":runs") or 0, info[5] or "0",
      tryCall("HGETALL", key .. ":capacity") or {}, tryCall("HGETALL", key .. ":free") or {},
      tryCall("HGETALL", key .. ":devices") or {},
    }
  end
end

return {
  now, redis.call("HEXISTS", metaKey, "paused"), statuses, shapes, workers,
  redis.call("HGETALL", poolCapacityKey), redis.call("HGETALL", poolUsedKey), redis.call("HGETALL", statsKey),
  runTimeBounds("wait"), runTimeBounds("duration"),
}
