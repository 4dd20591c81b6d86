-- @include amounts/parseResourceList

local MIB = 1048576

-- The memory of each device a worker's GPU probe read (`readings`: id ->
-- reading, see readGpuReadings), in bytes, as {whole, 0} amounts: `total`,
-- and `free` for a new run: what the probe found unused, less what fitq's
-- runs on the device booked (their `gpumem`, per device, in the worker's
-- records of its claims, `reservedKey`) and have not allocated yet (booked
-- beyond what the probe measured of them, `runsMiB`). A run claimed since
-- the probe counts in full; one ended since is still in the measured use
-- until the next probe: memory comes back late, never early.
local function deviceMemory(readings, reservedKey)
  local memory = {}
  for id, reading in pairs(readings) do
    local total, used = tonumber(reading.totalMiB), tonumber(reading.usedMiB)
    if total and used then memory[id] = {free = (total - used) * MIB, total = total * MIB, runs = reading.runsMiB} end
  end
  if next(memory) == nil then return memory end
  local claims = redis.call("HGETALL", reservedKey)
  for i = 1, #claims, 2 do
    local ok, claim = pcall(cjson.decode, claims[i + 1])
    if ok and type(claim) == "table" and type(claim.devices) == "string" and claim.devices ~= "" then
      local booked = 0
      for _, item in ipairs(parseResourceList(claim.reserved)) do
        if item[1] == "gpumem" then booked = item[2][1] end
      end
      for id in string.gmatch(claim.devices, "[^,]+") do
        local device = memory[id]
        if device and booked > 0 then
          local measured = type(device.runs) == "table" and tonumber(device.runs[claims[i]]) or 0
          device.free = device.free - math.max(0, booked - measured * MIB)
        end
      end
    end
  end
  for _, device in pairs(memory) do
    device.free = {math.floor(device.free), 0}
    device.total = {math.floor(device.total), 0}
    device.runs = nil
  end
  return memory
end
