#!lua
--[[
  Registers a worker with its capacity and a lease. A name held by a live
  worker is refused; a dead holder's leftovers are reaped first.

  KEYS[1] workers           zset: worker name -> lease deadline (epoch ms)
  KEYS[2] worker            hash: name, token, host, pid, startedAt, ...
  KEYS[3] worker:capacity   hash
  KEYS[4] worker:free       hash
  KEYS[5] worker:runs       set
  KEYS[6] worker:devices    hash: GPU device index -> free share (1 = whole device)

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] policy, ARGV[5] leaseMs,
  ARGV[6] concurrency, ARGV[7] host, ARGV[8] pid, ARGV[9] capacity ("a=1 b=2"),
  ARGV[10] logMaxLines,
  ARGV[11] GPU device indices ("0,1,3", or "" for none),
  ARGV[12] gpuPlacement ("pack" or "spread", shown to users judging why runs wait)
  ARGV[13] defaultTimeLimit, ARGV[14] maxTimeLimit (ms, "" for none: the
  limits its claims apply, kept for explainRuns and `fitq workers`)
  ARGV[15] "1" to register drained (a worker process registering again after
           `fitq drain`: see setDrained-3.lua), else ""


  Lease deadlines use the Redis server's clock.

  Returns CODE.ok, CODE.workerNameTaken when a live worker holds the name,
  or CODE.olderLayout when the namespace holds runs stored by an older fitq.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): the worker does not start.
]]
-- @include serverNow
-- @include leaseLapsedReason
-- @include lastSeenAlive
-- @include reapWorker
-- @include parseResourceList
-- @include formatAmount
-- @include publish
-- @include olderLayout
local workersKey = KEYS[1]
local workerKey = KEYS[2]
local capacityKey = KEYS[3]
local freeKey = KEYS[4]
-- (reapWorker empties it, found by the worker's name.)
local runsKey = KEYS[5]
local devicesKey = KEYS[6]
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
for _, item in ipairs(parseResourceList(ARGV[9])) do
  local amount = formatAmount(item[2])
  redis.call("HSET", capacityKey, item[1], amount)
  redis.call("HSET", freeKey, item[1], amount)
end
for id in string.gmatch(ARGV[11], "[^,]+") do
  redis.call("HSET", devicesKey, id, "1")
end
redis.call("ZADD", workersKey, now + leaseMs, name)
publish(base, {type = "workerJoined", worker = name})
return CODE.ok
