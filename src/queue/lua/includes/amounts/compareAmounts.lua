-- -1, 0 or 1 as a is less than, equal to or greater than b.
local function compareAmounts(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] and -1 or 1 end
  if a[2] ~= b[2] then return a[2] < b[2] and -1 or 1 end
  return 0
end
