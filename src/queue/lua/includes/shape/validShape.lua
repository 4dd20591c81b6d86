-- @include amounts/formatAmount
-- @include amounts/parseAmount

-- Whether a shape read from Redis is one fitq writes (stage.ts, shapeOf):
-- "none", or demands "name=amount" joined by commas, each name a resource
-- name (spec.ts) and each amount positive and exact as formatAmount writes
-- it; then, for a pinned run, ";gpus=" and device indices (0 to 1023); then,
-- for a run with a time limit, ";t=" and its ms (1 to MAX_LIMIT_MS, no
-- leading zero). Anything else in `shapes` was written there by hand.
local MAX_RESOURCE_NAME_LENGTH = 64
local MAX_LIMIT_MS = 365 * 86400000
local function validShape(shape)
  local rest, limit = string.match(shape, "^(.*);t=([^;]*)$")
  if limit then
    local ms = string.match(limit, "^[1-9]%d*$") and #limit <= 12 and tonumber(limit)
    if not ms or ms > MAX_LIMIT_MS then return false end
  else
    rest = shape
  end
  local demands, devices = string.match(rest, "^([^;]*);gpus=(.*)$")
  if not demands then demands = rest end
  if devices then
    for part in string.gmatch(devices .. ",", "([^,]*),") do
      local index = string.match(part, "^%d+$") and tonumber(part)
      if not index or tostring(index) ~= part or index > 1023 then return false end
    end
  end
  if demands == "none" then return true end
  for part in string.gmatch(demands .. ",", "([^,]*),") do
    local name, amount = string.match(part, "^([A-Za-z][A-Za-z0-9_.%-]*)=([%d.]+)$")
    if not name or #name > MAX_RESOURCE_NAME_LENGTH then return false end
    local parsed = parseAmount(amount)
    if formatAmount(parsed) ~= amount or (parsed[1] == 0 and parsed[2] == 0) then return false end
  end
  return true
end
