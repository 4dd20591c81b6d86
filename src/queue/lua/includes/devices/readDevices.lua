-- @include amounts/readAmounts
-- @include devices/deviceMemory
-- @include devices/readGpuReadings

-- A worker's devices as stored in its `worker:<name>:devices` hash (free
-- share of each), less those its GPU probe finds unusable now (`gpus`:
-- {key, staleMs, clock, reserved}, see readGpuReadings; nil: none are):
-- those read as having no free share, so nothing is placed on them, and
-- are listed in `unusable` (id -> {state, why}). `memory`: each probed device's memory (deviceMemory), for `gpumem`
-- demands; nil when the worker does not probe. `mig`: its MIG devices
-- ("100,101", as registered), of which a run gets one at most (`migs`: id ->
-- true).
local function readDevices(devicesKey, spread, gpus, mig)
  local shares = readAmounts(devicesKey)
  local ids = {}
  for id in pairs(shares) do ids[#ids + 1] = id end
  table.sort(ids, function(a, b) return tonumber(a) < tonumber(b) end)
  local unusable, readings = {}, nil
  if gpus then unusable, readings = readGpuReadings(gpus.key, ids, gpus.staleMs, gpus.clock) end
  for id in pairs(unusable) do shares[id] = {0, 0} end
  local memory = readings and next(readings) and deviceMemory(readings, gpus.reserved) or nil
  local migs = {}
  for id in string.gmatch(mig or "", "[^,]+") do migs[id] = true end
  return {shares = shares, ids = ids, spread = spread, unusable = unusable, memory = memory, migs = migs}
end
