-- An amount ({whole, micros}, see parseAmount) as the decimal string it is
-- stored as: "0.1", "-0.5", "2".
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
