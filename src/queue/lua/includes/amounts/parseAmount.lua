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
