-- @include amounts/compareAmounts

-- Whether a device has `need` bytes (a gpumem demand; nil: none) free, or
-- (with `total`) in all, as the worker's GPU probe read it (readDevices'
-- `memory`). A worker view without readings (a class's, judging what can
-- ever fit) has no `memory`: every device may. A probed device whose
-- memory nvidia-smi could not read has none.
local function memoryFits(devices, id, need, total)
  if need == nil or devices.memory == nil then return true end
  local memory = devices.memory[id]
  return memory ~= nil and compareAmounts(total and memory.total or memory.free, need) >= 0
end
