--[[
  Claims for a worker the first staged run, in order (higher priority, then
  older), that fits its free capacity, and reserves its demands. Cost grows
  with the number of demand shapes (and of holds, one per worker at most),
  not with the number of staged runs.

  A resource defined in the namespace's pool (`fitq pool set`) is reserved
  from the pool, the rest from the worker, in the same step.

  Policies:
    backfill (default) - one blocked head per namespace, the oldest: the
      first run in order that fits the worker's total capacity but not its
      free capacity is its blocked head, unless another live worker holds
      that run or an older one (lower score); then this worker holds nothing
      and backfills freely, and a hold it had is dropped. A hold stays with its
      worker until the run starts, the worker goes, or an older run is held
      elsewhere (its worker drops it on its next claim; until then it no
      longer counts). The head is held by amount: a later run may start
      beside it only if, for every resource the head needs, what stays free
      after the later run starts still covers the head's need; of a resource
      the head still lacks (free < its need) the later run takes nothing. So
      the head starts as soon as the runs that were running when it became
      the head have ended, and a stream of small runs cannot starve it; the
      oldest blocked run is always held by a worker that fits it, so every
      run starts in turn. On a worker with GPU devices the head's gpu demand
      is held by placement instead: a pinned head keeps its devices; an
      unpinned head that can be placed now must still be placeable after
      the later run takes its devices; one that cannot takes every device
      share from later runs. Any worker that can start a held run now does.
    fifo - strict order: the worker starts the first run that fits its total
      capacity, or waits for it (head-of-line blocking).

  KEYS[1] worker            hash: name, token, running, holding, ...
  KEYS[2] worker:capacity   hash: resource -> total amount
  KEYS[3] worker:free       hash: resource -> free amount
  KEYS[4] worker:runs       set of the worker's running run ids
  KEYS[5] workers           zset: worker name -> lease deadline
  KEYS[6] holds             hash: held run id -> worker holding it
  KEYS[7] pool:capacity     hash: cluster-wide resource -> total amount
  KEYS[8] pool:used         hash: cluster-wide resource -> amount reserved
  KEYS[9] worker:devices    hash: GPU device index -> free share (1 = whole device)

  A worker with GPU devices places a `gpu` demand on devices in the same
  step: a whole N takes N devices that are entirely free (lowest indices
  first); a fraction below 1 shares one device, never beyond 1 per device:
  with placement "pack" the fullest device that still fits (keeping whole
  devices free for whole-device runs), with "spread" the emptiest (ties:
  lowest index). A run pinned to devices (`fitq stage --gpus`)
  needs exactly those; without a gpu demand it takes them whole. On a worker
  without devices a pin only sets CUDA_VISIBLE_DEVICES. The run records its
  `devices`, `deviceShare` and the worker share it `reserved`.

  The blocked head also holds its share of pool resources: runs after it, on
  any worker, may not take what it waits for.

  ARGV[1] base      key prefix
  ARGV[2] token     the worker's registration token (fencing)
  ARGV[3] now       epoch ms (recorded as the job's processedOn)
  ARGV[4] maxRuns   most runs at once (0 = no limit)
  ARGV[5] policy    "backfill" or "fifo"
  ARGV[6] placement "pack" or "spread" (fractional gpu demands on devices)

  Taking a hold while another live worker holds a newer run, or starting a
  run another worker holds, publishes `holds`: workers holding a run claim
  again at once (and drop the hold, or hold the next run, or backfill).

  Returns one of:
    {1, runId, epoch, runFields}  claimed; runFields is the job hash, flat
    {2, ignored, heldRunId}   nothing may start now, something fits the total
                              capacity; heldRunId is the blocked head ("" if none)
    {3, ignored}   no staged run fits the worker's total capacity
    {4}            the worker already runs maxRuns runs
    {5}            the namespace's queue is paused (`fitq pause`, BullMQ's pause)
    {-1}           the worker is not registered under this token, or its
                   lease has run out (fenced)
  ignored lists "shape|missing,names|version" for shapes needing resources
  the worker does not declare; version (staged count and newest id) changes
  when runs of the shape come or go.
]]
-- @include runs
-- @include clock
local base, token, now, maxRuns, policy = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local spread = ARGV[6] == "spread"
-- Runs looked at per shape: its first only. The runs behind it demand the
-- same, so they fit no sooner, and being newer they are never held while it
-- waits.
local PER_SHAPE = 1

if redis.call("HGET", KEYS[1], "token") ~= token then return {-1} end
local name = redis.call("HGET", KEYS[1], "name")
local clock = serverNow()
-- A worker whose lease ran out is as good as reaped: it may claim nothing.
local deadline = redis.call("ZSCORE", KEYS[5], name)
if not deadline or tonumber(deadline) < clock then return {-1} end
local running = tonumber(redis.call("HGET", KEYS[1], "running") or "0")
if maxRuns > 0 and running >= maxRuns then return {4} end
if queuePaused(base) then return {5} end

local capacity = readAmounts(KEYS[2])
local free = readAmounts(KEYS[3])
local poolCapacity = readAmounts(KEYS[7])
local poolUsed = readAmounts(KEYS[8])
local poolFree = {}
for resource, total in pairs(poolCapacity) do
  poolFree[resource] = subtractAmounts(total, poolUsed[resource] or {0, 0})
end

-- GPU devices, if the worker declared any, by index.
local devices = readAmounts(KEYS[9])
local deviceIds = {}
for id in pairs(devices) do deviceIds[#deviceIds + 1] = id end
table.sort(deviceIds, function(a, b) return tonumber(a) < tonumber(b) end)
local WHOLE = {1, 0}

local function gpuDemand(demand)
  for _, item in ipairs(demand) do
    if item[1] == "gpu" then return item[2] end
  end
  return nil
end

local function isDevice(id) return devices[id] ~= nil end

-- Whether a gpu demand (pinned to some devices, or not) can ever be placed
-- on this worker's devices.
local function placeable(demand, pinned)
  local need = gpuDemand(demand)
  if #deviceIds == 0 or not need then return true end
  if #pinned > 0 then
    for _, id in ipairs(pinned) do
      if not isDevice(id) then return false end
    end
    if need[2] == 0 then return need[1] == #pinned end
    return need[1] == 0 and #pinned == 1
  end
  if need[2] == 0 then return need[1] <= #deviceIds end
  return need[1] == 0
end

-- The devices (and the share of each) a gpu demand gets now, leaving alone
-- the devices in `spare`; {} when there is nothing to place; nil when it
-- cannot be placed now.
local function placeDevices(demand, pinned, spare)
  local need = gpuDemand(demand)
  if #deviceIds == 0 or not need then return {}, nil end
  local share = need[2] == 0 and WHOLE or need
  if #pinned > 0 then
    for _, id in ipairs(pinned) do
      if spare[id] or compareAmounts(devices[id], share) < 0 then return nil end
    end
    return pinned, share
  end
  if need[2] == 0 then
    local chosen = {}
    for _, id in ipairs(deviceIds) do
      if not spare[id] and compareAmounts(devices[id], WHOLE) == 0 then
        chosen[#chosen + 1] = id
        if #chosen == need[1] then return chosen, WHOLE end
      end
    end
    return nil
  end
  -- pack: the fullest device that fits; spread: the emptiest (ties: lowest index).
  local better = spread and 1 or -1
  local best
  for _, id in ipairs(deviceIds) do
    if not spare[id] and compareAmounts(devices[id], need) >= 0 and
        (best == nil or compareAmounts(devices[id], devices[best]) == better) then
      best = id
    end
  end
  if best then return {best}, need end
  return nil
end

-- Splits a demand into what the worker provides and what the pool provides.
local function split(demand)
  local own, pooled = {}, {}
  for _, item in ipairs(demand) do
    if poolCapacity[item[1]] then pooled[#pooled + 1] = item else own[#own + 1] = item end
  end
  return own, pooled
end

-- Whether every demanded amount is within what is available, less what is
-- held (for a blocked head) in `held`.
local function fitsWithin(demand, available, held)
  for _, item in ipairs(demand) do
    local limit = available[item[1]]
    if held and held[item[1]] then limit = subtractAmounts(limit, held[item[1]]) end
    if compareAmounts(item[2], limit) > 0 then return false end
  end
  return true
end

local function liveHolder(holder)
  local until_ = redis.call("ZSCORE", KEYS[5], holder)
  return until_ ~= false and tonumber(until_) >= clock
end

-- The oldest run another live worker holds (lowest score): this worker
-- holds a blocked head only if it is older still, and later runs on any
-- worker leave this run its share of the pool. A newer hold elsewhere no
-- longer counts: its worker drops it on its next claim.
local olderHold
local holds = redis.call("HGETALL", KEYS[6])
for i = 1, #holds, 2 do
  if holds[i + 1] ~= name and liveHolder(holds[i + 1]) then
    local runKey = jobKey(base, holds[i])
    local score = tonumber(redis.call("HGET", runKey, "score"))
    if score and (olderHold == nil or score < olderHold.score) then
      olderHold = {score = score, runKey = runKey}
    end
  end
end
if olderHold then
  local demandText = splitShape(storedShape(olderHold.runKey))
  local _, pooled = split(parseResourceList(demandText))
  olderHold.pooled = pooled
end

-- What the older hold elsewhere holds of the pool, for a run with this score.
local function poolHeldBefore(score)
  local held = {}
  if olderHold and olderHold.score < score then
    for _, item in ipairs(olderHold.pooled) do held[item[1]] = item[2] end
  end
  return held
end

-- Candidates: the first runs of every shape that fits the total capacity.
local candidates = {}
local ignored = {}
for _, shape in ipairs(redis.call("SMEMBERS", base .. "shapes")) do
  local demandText, pinned = splitShape(shape)
  local demand = parseResourceList(demandText)
  local missing = {}
  for _, item in ipairs(demand) do
    if capacity[item[1]] == nil and poolCapacity[item[1]] == nil then missing[#missing + 1] = item[1] end
  end
  local own, pooled = split(demand)
  -- On a worker with devices, a pinned run without a gpu demand takes its
  -- devices whole.
  if #pinned > 0 and #deviceIds > 0 and not gpuDemand(own) then own[#own + 1] = {"gpu", {#pinned, 0}} end
  local stagedKey = base .. "staged:" .. shape
  if #missing > 0 then
    local newest = redis.call("ZRANGE", stagedKey, -1, -1)[1] or ""
    ignored[#ignored + 1] = shape .. "|" .. table.concat(missing, ",") .. "|" ..
      redis.call("ZCARD", stagedKey) .. ":" .. newest
  elseif fitsWithin(own, capacity) and fitsWithin(pooled, poolCapacity) and placeable(own, pinned) then
    local entries = redis.call("ZRANGE", stagedKey, 0, PER_SHAPE - 1, "WITHSCORES")
    if entries[1] == nil then redis.call("SREM", base .. "shapes", shape) end
    for i = 1, #entries, 2 do
      candidates[#candidates + 1] = {id = entries[i], score = tonumber(entries[i + 1]), shape = shape,
        own = own, pooled = pooled, pinned = pinned}
    end
  end
end
table.sort(candidates, function(a, b) return a.score < b.score end)

-- The first candidate that fits what is free, less what the blocked head
-- holds: this worker's head holds its worker resources by amount, its gpu
-- demand by placement (see placeBesideHead) and its pool share; without a
-- head here, the older hold elsewhere holds its pool share.
local chosen, head, placed, share
local held, heldPool, spareDevices = nil, nil, {}
-- This worker's unpinned head on devices: its demand, and the devices (and
-- share) it would get now; placed is nil when it cannot be placed now.
local headDevices

-- Takes (sign -1) or gives back (1) a share of each listed device.
local function shiftDevices(ids, amount, sign)
  for _, id in ipairs(ids) do
    devices[id] = sign < 0 and subtractAmounts(devices[id], amount) or addAmounts(devices[id], amount)
  end
end

-- Where a later run's gpu demand goes beside an unpinned head, or nil when
-- it would take what the head needs: on what the head's own placement
-- leaves, else where it would go anyway if the head can still be placed
-- after it. A head that cannot be placed now lets later runs take no device.
local function placeBesideHead(candidate)
  if headDevices == nil or not gpuDemand(candidate.own) then
    return placeDevices(candidate.own, candidate.pinned, spareDevices)
  end
  local headPlaced, headShare = headDevices.placed, headDevices.share
  if headPlaced == nil then return nil end
  shiftDevices(headPlaced, headShare, -1)
  local ids, amount = placeDevices(candidate.own, candidate.pinned, spareDevices)
  shiftDevices(headPlaced, headShare, 1)
  if ids then return ids, amount end
  ids, amount = placeDevices(candidate.own, candidate.pinned, spareDevices)
  if not ids then return nil end
  shiftDevices(ids, amount, -1)
  local headStillFits = placeDevices(headDevices.own, {}, {}) ~= nil
  shiftDevices(ids, amount, 1)
  if headStillFits then return ids, amount end
  return nil
end

for _, candidate in ipairs(candidates) do
  -- Once this worker holds a head, it is older than any hold elsewhere.
  local poolHeld = heldPool or poolHeldBefore(candidate.score)
  if fitsWithin(candidate.own, free, held) and fitsWithin(candidate.pooled, poolFree, poolHeld) then
    placed, share = placeBesideHead(candidate)
    if placed then
      chosen = candidate
      break
    end
  end
  if policy == "fifo" then
    head = candidate
    break
  end
  -- The first run that cannot start becomes this worker's blocked head only
  -- if no other live worker holds it or an older run.
  if head == nil and (olderHold == nil or candidate.score < olderHold.score) then
    head = candidate
    held, heldPool = {}, {}
    for _, item in ipairs(candidate.own) do held[item[1]] = item[2] end
    for _, item in ipairs(candidate.pooled) do heldPool[item[1]] = item[2] end
    -- On devices the head holds devices, not a count of gpu: a pinned head
    -- its own devices, an unpinned one its placement.
    if #deviceIds > 0 and gpuDemand(candidate.own) then
      held.gpu = nil
      if #candidate.pinned > 0 then
        for _, id in ipairs(candidate.pinned) do spareDevices[id] = true end
      else
        local headPlaced, headShare = placeDevices(candidate.own, {}, {})
        headDevices = {own = candidate.own, placed = headPlaced, share = headShare}
      end
    end
  end
end

-- Record which run this worker holds, dropping the one it held before.
local holding = redis.call("HGET", KEYS[1], "holding")
local headId = head and head.id or ""
if holding and holding ~= headId and redis.call("HGET", KEYS[6], holding) == name then
  redis.call("HDEL", KEYS[6], holding)
end
if head and policy ~= "fifo" then
  redis.call("HSET", KEYS[6], head.id, name)
  redis.call("HSET", KEYS[1], "holding", head.id)
  -- Workers holding newer runs no longer do: they may backfill now.
  if olderHold and holding ~= head.id then publish(base, {type = "holds", worker = name}) end
else
  redis.call("HDEL", KEYS[1], "holding")
end
-- Under fifo the blocked head holds nothing, but everything after it waits.
if head and policy == "fifo" and chosen == nil then
  redis.call("HSET", KEYS[1], "blockedBy", head.id)
else
  redis.call("HDEL", KEYS[1], "blockedBy")
end

if chosen == nil then
  if #candidates > 0 then return {2, ignored, headId} end
  return {3, ignored}
end

local runKey = jobKey(base, chosen.id)
-- Its job goes active under a lock held with this registration's lease
-- (first: a write Redis refuses here leaves nothing reserved).
activateJob(base, chosen.id, name, token, redis.call("HGET", KEYS[1], "leaseMs"), now)
local heldBy = redis.call("HGET", KEYS[6], chosen.id)
if heldBy and heldBy ~= name then publish(base, {type = "holds", worker = name}) end
unstage(base, chosen.id, chosen.shape)
adjustAmounts(KEYS[3], chosen.own, -1)
adjustAmounts(KEYS[8], chosen.pooled, 1)
local epoch = redis.call("HINCRBY", runKey, "epoch", 1)
redis.call("HSET", runKey, "status", "running", "worker", name,
  "reserved", formatResourceList(chosen.own), "pooled", formatResourceList(chosen.pooled))
if #placed > 0 then
  for _, id in ipairs(placed) do
    redis.call("HSET", KEYS[9], id, formatAmount(subtractAmounts(devices[id], share)))
  end
  redis.call("HSET", runKey, "devices", table.concat(placed, ","), "deviceShare", formatAmount(share))
else
  redis.call("HDEL", runKey, "devices", "deviceShare")
end
redis.call("HDEL", runKey, "reason")
redis.call("SADD", KEYS[4], chosen.id)
redis.call("HINCRBY", KEYS[1], "running", 1)
return {1, chosen.id, epoch, redis.call("HGETALL", runKey)}
