-- What a claim reserved, kept in the worker's own `worker:<name>:reserved`
-- hash (run id -> JSON) beside the run's job hash, so it can be given back
-- even when the job hash is gone (deleted from BullMQ under a running run:
-- obliterate with force, clean of an active job whose lock lapsed).
-- @include amounts

local function claimsKey(workerKey) return workerKey .. ":reserved" end

-- The record of a claim: its epoch, the worker share (`reserved`), the pool
-- share (`pooled`), and the GPU devices it took with the share of each.
local function encodeClaim(epoch, reserved, pooled, devices, deviceShare)
  return cjson.encode({epoch = tostring(epoch), reserved = reserved, pooled = pooled,
    devices = devices or "", deviceShare = deviceShare or ""})
end

-- The record of a claim (nil when there is none, or it is unreadable).
local function readClaim(workerKey, runId)
  local text = redis.call("HGET", claimsKey(workerKey), runId)
  if not text then return nil end
  local ok, claim = pcall(cjson.decode, text)
  if ok and type(claim) == "table" then return claim end
  return nil
end

-- Gives the worker share of a claim back to the worker's free capacity and
-- devices.
local function releaseWorkerShare(freeKey, devicesKey, reserved, devices, deviceShare)
  adjustAmounts(freeKey, parseResourceList(reserved), 1)
  if devices and devices ~= "" then
    local share = parseAmount(deviceShare)
    for id in string.gmatch(devices, "[^,]+") do
      redis.call("HSET", devicesKey, id, formatAmount(addAmounts(parseAmount(redis.call("HGET", devicesKey, id)), share)))
    end
  end
end

-- Gives a claim's pool share back; returns whether there was one.
local function releasePoolShare(base, pooled)
  local list = parseResourceList(pooled)
  adjustAmounts(base .. "pool:used", list, -1)
  return #list > 0
end
