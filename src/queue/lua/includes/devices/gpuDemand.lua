-- The gpu amount of a demand (a list of {name, amount}), or nil.
local function gpuDemand(demand)
  for _, item in ipairs(demand) do
    if item[1] == "gpu" then return item[2] end
  end
  return nil
end
