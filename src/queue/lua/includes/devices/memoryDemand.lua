-- The gpumem amount of a demand (a list of {name, amount}): memory on each
-- device the run gets, in bytes; or nil.
local function memoryDemand(demand)
  for _, item in ipairs(demand) do
    if item[1] == "gpumem" then return item[2] end
  end
  return nil
end
