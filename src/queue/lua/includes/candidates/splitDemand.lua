-- Splits a demand into what the worker provides and what the pool provides.
local function splitDemand(pool, demand)
  local own, pooled = {}, {}
  for _, item in ipairs(demand) do
    if pool.capacity[item[1]] then pooled[#pooled + 1] = item else own[#own + 1] = item end
  end
  return own, pooled
end
