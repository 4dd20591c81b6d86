-- @include amounts/readAmounts
-- @include devices/readGpuReadings

-- A worker's devices as stored in its `worker:<name>:devices` hash (free
-- share of each), less those its GPU probe finds unusable now (`gpus`:
-- {key, staleMs, clock}, see readGpuReadings; nil: none are): those read as
-- having no free share, so nothing is placed on them, and are listed in
-- `unusable` (id -> {state, why}) with `usable`, how many are left.
local function readDevices(devicesKey, spread, gpus)
  local shares = readAmounts(devicesKey)
  local ids = {}
  for id in pairs(shares) do ids[#ids + 1] = id end
  table.sort(ids, function(a, b) return tonumber(a) < tonumber(b) end)
  local unusable = gpus and readGpuReadings(gpus.key, ids, gpus.staleMs, gpus.clock) or {}
  local usable = #ids
  for id in pairs(unusable) do
    shares[id] = {0, 0}
    usable = usable - 1
  end
  return {shares = shares, ids = ids, spread = spread, unusable = unusable, usable = usable}
end
