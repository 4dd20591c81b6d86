-- @include amounts/parseAmount
-- @include arrays/arrayOfLimit
-- @include shape/formatShape
-- @include shape/isName
-- @include shape/shapeUser

-- The one reading of a shape (src/resources/shape.ts is its TypeScript
-- twin; parseShape keeps what a call read): "none", or demands
-- "name=amount" joined by commas, each name a resource name (spec.ts)
-- given once and each amount positive and exact; then, for a pinned run,
-- ";gpus=" and device indices (0 to 1023); then, for a run with a time
-- limit, ";t=" and its ms (1 to MAX_LIMIT_MS); then, for a run of a
-- project, ";p=" and the project; then, for a run whose stager is known,
-- ";u=" and a user name (a project is a name too: src/resources/user-name.ts:
-- 1 to 64 of letters, digits and ._@+-, not starting with . @ + or -). Gives `demand` (a list of
-- {name, amount}, in the shape's order), `group` (the names joined by
-- commas, "none" for none, arrays' limits `array.<id>` left out, so arrays
-- of the same demands share a group: a worker that lacks one of them, and
-- the pool too, can run no shape of the group), `arrays` (the arrays whose
-- limits it demands: one, for a run of an array with a limit), `pinned` (device indices, text) and
-- `limit` (ms, or nil), `project` (or nil) and `user` (or nil); nil when the text is not exactly as formatShape
-- writes it, which only a hand can have put in Redis.
local MAX_RESOURCE_NAME_LENGTH = 64
local MAX_LIMIT_MS = 365 * 86400000
-- Whole parts beyond it are not exact in a double (amount.ts, MAX_WHOLE_UNITS).
local MAX_WHOLE_UNITS = 9007199254740991
local function readShape(text)
  local staged, user = shapeUser(text)
  if user and not isName(user) then return nil end
  local limited, project = string.match(staged, "^(.*);p=([^;]*)$")
  if project and not isName(project) then return nil end
  limited = limited or staged
  local rest, limitText = string.match(limited, "^(.*);t=([^;]*)$")
  local limit
  if limitText then
    limit = string.match(limitText, "^[1-9]%d*$") and #limitText <= 12 and tonumber(limitText)
    if not limit or limit > MAX_LIMIT_MS then return nil end
  else
    rest = limited
  end
  local demands, devices = string.match(rest, "^([^;]*);gpus=(.*)$")
  if not demands then demands = rest end
  local pinned = {}
  if devices then
    for part in string.gmatch(devices .. ",", "([^,]*),") do
      local index = string.match(part, "^%d+$") and tonumber(part)
      if not index or index > 1023 then return nil end
      pinned[#pinned + 1] = tostring(index)
    end
  end
  local demand, names, arrays, seen = {}, {}, {}, {}
  if demands ~= "none" then
    for part in string.gmatch(demands .. ",", "([^,]*),") do
      local name, amount = string.match(part, "^([A-Za-z][A-Za-z0-9_.%-]*)=([%d.]+)$")
      if not name or #name > MAX_RESOURCE_NAME_LENGTH or seen[name] then return nil end
      local parsed = parseAmount(amount)
      if (parsed[1] == 0 and parsed[2] == 0) or parsed[1] > MAX_WHOLE_UNITS then return nil end
      seen[name] = true
      demand[#demand + 1] = {name, parsed}
      local array = arrayOfLimit(name)
      if array then arrays[#arrays + 1] = array else names[#names + 1] = name end
    end
  end
  local shape = {demand = demand, group = #names == 0 and "none" or table.concat(names, ","), arrays = arrays, pinned = pinned,
    limit = limit, project = project, user = user}
  -- Exactly as fitq writes it: no leading zeros, no trailing decimal zeros, no amount beyond exact.
  if formatShape(shape) ~= text then return nil end
  return shape
end
