-- @include amounts/formatAmount

-- The class of the worker a claim's view sees (readClaimView): workers of
-- the same total capacity, GPU devices, maximum time limit and resources
-- the pool also holds (the pool's share of them wins: splitDemand) can
-- run the same shapes, and share one fit index per group
-- (`fit:<id>|<names>`, kept by catchUpClass). `id`: 16 hex digits of the
-- SHA-1 of what defines it.
local function workerClass(view)
  local names = {}
  for name in pairs(view.capacity) do names[#names + 1] = name end
  table.sort(names)
  local parts, pooled, pooledNames = {}, {}, {}
  for i, name in ipairs(names) do
    parts[i] = name .. "=" .. formatAmount(view.capacity[name])
    if view.pool.capacity[name] then
      pooled[name] = true
      pooledNames[#pooledNames + 1] = name
    end
  end
  local max = view.limits.max and string.format("%.0f", view.limits.max) or ""
  local definition = table.concat(parts, ",") .. "|" .. table.concat(view.devices.ids, ",") .. "|" .. max .. "|" ..
    table.concat(pooledNames, ",")
  return {id = string.sub(redis.sha1hex(definition), 1, 16), capacity = view.capacity, deviceIds = view.devices.ids,
    max = view.limits.max, pooled = pooled}
end
