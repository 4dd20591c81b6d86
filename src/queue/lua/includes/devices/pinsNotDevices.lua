-- The pinned indices that are not devices of this worker (none on a worker
-- without devices, where a pin only sets CUDA_VISIBLE_DEVICES).
local function pinsNotDevices(devices, pinned)
  local missing = {}
  if #devices.ids == 0 then return missing end
  for _, id in ipairs(pinned) do
    if devices.shares[id] == nil then missing[#missing + 1] = id end
  end
  return missing
end
