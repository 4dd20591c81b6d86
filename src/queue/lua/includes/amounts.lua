-- Exact decimal amounts. An amount is {whole, micros}: the whole part is exact
-- in a double up to 2^53 - 1, the fraction is kept as millionths, so sums and
-- differences never round. Amounts are stored as decimal strings ("0.1").
local function parseAmount(text)
  local sign, whole, fraction = string.match(text or "0", "^(%-?)(%d+)%.?(%d*)$")
  if not whole then return {0, 0} end
  local micros = tonumber((fraction .. "000000"):sub(1, 6))
  if sign == "" or (tonumber(whole) == 0 and micros == 0) then return {tonumber(whole), micros} end
  -- Negative: {whole, micros} keeps micros in [0, 1e6), so -0.5 is {-1, 500000}.
  if micros == 0 then return {-tonumber(whole), 0} end
  return {-tonumber(whole) - 1, 1000000 - micros}
end

local function formatAmount(a)
  local whole, micros, sign = a[1], a[2], ""
  if whole < 0 then
    sign = "-"
    if micros > 0 then whole, micros = -whole - 1, 1000000 - micros else whole = -whole end
  end
  local text = sign .. string.format("%.0f", whole)
  if micros == 0 then return text end
  return text .. "." .. string.gsub(string.format("%06d", micros), "0+$", "")
end

-- -1, 0 or 1 as a is less than, equal to or greater than b.
local function compareAmounts(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] and -1 or 1 end
  if a[2] ~= b[2] then return a[2] < b[2] and -1 or 1 end
  return 0
end

local function addAmounts(a, b)
  local whole, micros = a[1] + b[1], a[2] + b[2]
  if micros >= 1000000 then whole, micros = whole + 1, micros - 1000000 end
  return {whole, micros}
end

local function subtractAmounts(a, b)
  local whole, micros = a[1] - b[1], a[2] - b[2]
  if micros < 0 then whole, micros = whole - 1, micros + 1000000 end
  return {whole, micros}
end

-- "a=1 b=0.5" (a run's resources) or "a=1,b=0.5" (a shape) -> list of {name, amount}.
-- The shape "none" (no demands) gives an empty list.
local function parseResourceList(text)
  local list = {}
  for name, value in string.gmatch(text or "", "([^%s,=]+)=([^%s,]+)") do
    list[#list + 1] = {name, parseAmount(value)}
  end
  return list
end

-- A list of {name, amount} as "a=1 b=0.5" (names in list order).
local function formatResourceList(list)
  local parts = {}
  for _, item in ipairs(list) do parts[#parts + 1] = item[1] .. "=" .. formatAmount(item[2]) end
  return table.concat(parts, " ")
end

-- A hash of name -> decimal amount, as a table of name -> amount.
local function readAmounts(key)
  local flat = redis.call("HGETALL", key)
  local amounts = {}
  for i = 1, #flat, 2 do amounts[flat[i]] = parseAmount(flat[i + 1]) end
  return amounts
end

-- Adds sign * amount of each listed resource to the hash at key.
local function adjustAmounts(key, list, sign)
  for _, item in ipairs(list) do
    local current = parseAmount(redis.call("HGET", key, item[1]) or "0")
    local updated = sign > 0 and addAmounts(current, item[2]) or subtractAmounts(current, item[2])
    redis.call("HSET", key, item[1], formatAmount(updated))
  end
end
