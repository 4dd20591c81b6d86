#!lua
--[[
  Takes back for a worker the claim of a run that a Redis failover lost.
  Replication is asynchronous: the old master acknowledged the claim, the
  worker started the run's process, and the replica that took over never
  received the claim, so Redis holds the run as staged again and what it
  reserved as free. If nothing happened to the run since (still staged in
  its fit index, claimed by no one after the lost claim, not held, removed
  or waiting for anything) and what the claim reserved is still free on the
  worker, on its GPU devices and in the pool, the claim is made again as it
  was (its epoch, reservation, devices, start and deadline; includes/claims/
  takeRun.lua, as claimRun makes it): the process runs on and its end is
  recorded as any other. Else the run moved on without that claim: the
  worker stops its copy, and the run's history gets an attempt saying so
  (`runs:<id>:attempts`, as recordAttempt writes them).

  KEYS[1]  worker:<name>           hash: name, token, running, leaseMs, ...
  KEYS[2]  worker:<name>:free      hash: resource -> free amount
  KEYS[3]  worker:<name>:runs      set of the worker's running run ids
  KEYS[4]  workers                 zset: worker name -> lease deadline
  KEYS[5]  holds                   hash: held run id -> worker holding it
  KEYS[6]  pool:capacity           hash: cluster-wide resource -> total amount
  KEYS[7]  pool:used               hash: cluster-wide resource -> amount reserved
  KEYS[8]  worker:<name>:devices   hash: GPU device index -> free share
  KEYS[9]  worker:<name>:reserved  hash: run id -> what its claim reserved (JSON)
  KEYS[10..16] what its includes touch, each named at its top: groups,
  KEYS[17] fair-share    hash: fair share's settings (includes/fairshare/, accrueUsage)
  KEYS[18] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  stats, runs:wait, runs:active, runs:prioritized, runs:events, runs:meta
  (and, under the namespace's hash tag, the run's job hash, lock and
  attempts, its shape's staged index, group, group log and class indexes)

  ARGV[1] base, ARGV[2] token, ARGV[3] runId, and the lost claim as the
  worker received it: ARGV[4] epoch, ARGV[5] reserved ("cpu=1 mem=2"),
  ARGV[6] pooled, ARGV[7] devices ("0,1" or ""), ARGV[8] deviceShare,
  ARGV[9] runLimit (ms, "" for none), ARGV[10] deadline (epoch ms, "" for
  none), ARGV[11] processedOn (when it was claimed, epoch ms)

  Returns one of:
    {CODE.ok}         claimed back
    {CODE.unchanged}  Redis holds the run for this claim already
    {CODE.claimLost, why, status, other}  the run moved on without the
      claim; why is "gone" (no such run any more, or taken out of the
      worker's set of runs by hand), "moved" (claimed since,
      or no longer staged: status, and other is the worker it runs on),
      "parked" (staged but not claimable: held, delayed, waiting for runs)
      or "noRoom" (other: the resource, or "gpu <device>", no longer free;
      "quota": its user's quota is reached by runs started meanwhile)
    {CODE.fenced}     the worker is not registered under this token, or its
                      lease has run out

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), before its first write: a claim is never taken back
  part-way (the worker stops its copy at its next heartbeat instead).
]]
-- @include amounts/compareAmounts
-- @include workers/holdsLease
-- @include amounts/parseAmount
-- @include amounts/parseResourceList
-- @include candidates/readPool
-- @include namespace/serverNow
-- @include claims/takeRun
-- @include shape/parseShape
-- @include quotas/runQuotaShort
local workerKey = KEYS[1]
local workerFreeKey = KEYS[2]
local workerRunsKey = KEYS[3]
local workersKey = KEYS[4]
local holdsKey = KEYS[5]
local poolCapacityKey = KEYS[6]
local poolUsedKey = KEYS[7]
local workerDevicesKey = KEYS[8]
local workerReservedKey = KEYS[9]
-- (Touched by its includes.)
local groupsKey = KEYS[10]
local statsKey = KEYS[11]
local queueWaitKey = KEYS[12]
local queueActiveKey = KEYS[13]
local queuePrioritizedKey = KEYS[14]
local queueEventsKey = KEYS[15]
local queueMetaKey = KEYS[16]
-- (Touched by its includes.)
local fairShareKey = KEYS[17]
local fairUsageKey = KEYS[18]
local base, token, runId, lostEpoch = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

local name = redis.call("HGET", workerKey, "name")
if not name or not holdsLease(workerKey, workersKey, name, token) then return {CODE.fenced} end
local runKey = KEY.run(base, runId)
local run = redis.call("HMGET", runKey, "status", "worker", "epoch", "shape")
if not run[1] then return {CODE.claimLost, "gone", "", ""} end
local status, epoch = run[1], tonumber(run[3] or "0") or 0
if status == "running" and run[2] == name and epoch == lostEpoch then
  if redis.call("SISMEMBER", workerRunsKey, runId) == 1 then return {CODE.unchanged} end
  -- Not lost by a failover: the worker's set of runs lost it by hand. Its end, recorded as usual, says why.
  return {CODE.claimLost, "gone", status, ""}
end

-- The run moved on without the claim: its history says what became of this copy.
local function lost(why, other, what)
  redis.call("RPUSH", KEY.runAttempts(base, runId), cjson.encode({
    attempt = redis.call("LLEN", KEY.runAttempts(base, runId)) + 1, worker = name, startedAt = tonumber(ARGV[11]),
    endedAt = serverNow(), status = "stopped",
    reason = "its claim on " .. name .. " was lost in a Redis failover and " .. what .. " meanwhile: this copy was stopped",
  }))
  return {CODE.claimLost, why, status, other or ""}
end

if status ~= "staged" or not lostEpoch or epoch >= lostEpoch then
  if status == "running" then return lost("moved", run[2], "worker " .. tostring(run[2]) .. " claimed the run again") end
  if status == "staged" then return lost("moved", "", "the run was claimed and put back") end
  return lost("moved", "", "the run ended " .. status)
end
local shape = run[4] or ""
if not redis.call("ZSCORE", KEY.staged(base, shape), runId) then
  return lost("parked", "", "the run was held, delayed or set to wait")
end

-- What the claim reserved must still be free: of the worker, of its devices, of the pool.
local own, pooled = parseResourceList(ARGV[5]), parseResourceList(ARGV[6])
for _, item in ipairs(own) do
  local free = redis.call("HGET", workerFreeKey, item[1])
  if not free or compareAmounts(parseAmount(free), item[2]) < 0 then
    return lost("noRoom", item[1], item[1] .. " it had reserved went to other runs")
  end
end
local pool = readPool(poolCapacityKey, poolUsedKey)
for _, item in ipairs(pooled) do
  local free = pool.free[item[1]]
  if not free or compareAmounts(free, item[2]) < 0 then
    return lost("noRoom", item[1], "pool resource " .. item[1] .. " it had reserved went to other runs")
  end
end
-- Nor may it take its user (or project) past their quota (runs of theirs started meanwhile).
local parsed = parseShape(shape)
local short = parsed and runQuotaShort(base, pool.quotas, parsed)
if short then
  return lost("noRoom", "quota", "the quota of " .. short.owner .. " it had counted against (" .. short.name .. ") went to other runs")
end
local placed, shares, share = {}, {}, parseAmount(ARGV[8])
for id in string.gmatch(ARGV[7] or "", "[^,]+") do
  local free = redis.call("HGET", workerDevicesKey, id)
  if not free or compareAmounts(parseAmount(free), share) < 0 then
    return lost("noRoom", "gpu " .. id, "GPU " .. id .. " it had been placed on went to other runs")
  end
  placed[#placed + 1], shares[id] = id, parseAmount(free)
end

takeRun(base, {
  worker = workerKey, free = workerFreeKey, devices = workerDevicesKey, reserved = workerReservedKey, runs = workerRunsKey,
  holds = holdsKey, poolUsed = poolUsedKey,
}, name, token, {
  id = runId, shape = shape, own = own, pooled = pooled, placed = placed, share = share, shares = shares,
  runLimit = tonumber(ARGV[9]), deadline = tonumber(ARGV[10]), epoch = lostEpoch,
}, tonumber(ARGV[11]) or serverNow(), nil)
return {CODE.ok}
