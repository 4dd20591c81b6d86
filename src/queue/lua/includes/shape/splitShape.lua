-- A shape's demands ("a=1,b=2" or "none"), the GPU devices its runs are
-- pinned to ("gpu=1;gpus=0,3" -> "gpu=1", {"0", "3"}; none: {}) and their
-- time limit in ms ("gpu=1;t=600000" -> 600000; none: nil).
local function splitShape(shape)
  local rest, limit = string.match(shape, "^(.-);t=(%d+)$")
  if not rest then rest = shape end
  limit = limit and tonumber(limit)
  local demands, pinned = string.match(rest, "^(.-);gpus=(.*)$")
  if not demands then return rest, {}, limit end
  local devices = {}
  for id in string.gmatch(pinned, "[^,]+") do devices[#devices + 1] = id end
  return demands, devices, limit
end
