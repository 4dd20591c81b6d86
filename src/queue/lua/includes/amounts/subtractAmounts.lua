-- a - b, exactly (amounts as parseAmount gives them; the result may be negative).
local function subtractAmounts(a, b)
  local whole, micros = a[1] - b[1], a[2] - b[2]
  if micros < 0 then whole, micros = whole - 1, micros + 1000000 end
  return {whole, micros}
end
