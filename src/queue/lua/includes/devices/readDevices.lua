-- @include amounts/readAmounts

-- A worker's devices as stored in its `worker:<name>:devices` hash.
local function readDevices(devicesKey, spread)
  local shares = readAmounts(devicesKey)
  local ids = {}
  for id in pairs(shares) do ids[#ids + 1] = id end
  table.sort(ids, function(a, b) return tonumber(a) < tonumber(b) end)
  return {shares = shares, ids = ids, spread = spread}
end
