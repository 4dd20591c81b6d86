-- A shape's demands ("a=1,b=2" or "none") and the GPU devices its runs are
-- pinned to ("gpu=1;gpus=0,3" -> "gpu=1", {"0", "3"}; none: {}).
local function splitShape(shape)
  local demands, pinned = string.match(shape, "^(.-);gpus=(.*)$")
  if not demands then return shape, {} end
  local devices = {}
  for id in string.gmatch(pinned, "[^,]+") do devices[#devices + 1] = id end
  return demands, devices
end
