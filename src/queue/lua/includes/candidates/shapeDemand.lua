-- @include devices/gpuDemand
-- @include candidates/splitDemand

-- What the runs of a shape (`parsed`: as parseShape read it) demand of this worker: `demand` (all of it),
-- `own` (from the worker: on a worker with devices, a pinned run without a
-- gpu demand takes its devices whole), `pooled` (from the pool), `pinned`
-- (device indices), `missing` (resources neither the worker nor the pool
-- has), `limit` (the time limit its runs were staged with, ms, if any),
-- `runLimit` (the one they get on this worker: theirs, else the worker's
-- default, else its maximum; nil for none) and `overLimit` (theirs is above
-- the worker's maximum: it never claims them).
local function shapeDemand(view, shape, parsed)
  local demand, pinned, limit = parsed.demand, parsed.pinned, parsed.limit
  local limits = view.limits or {}
  local missing = {}
  for _, item in ipairs(demand) do
    if view.capacity[item[1]] == nil and view.pool.capacity[item[1]] == nil then missing[#missing + 1] = item[1] end
  end
  local own, pooled = splitDemand(view.pool, demand)
  if #pinned > 0 and #view.devices.ids > 0 and not gpuDemand(own) then own[#own + 1] = {"gpu", {#pinned, 0}} end
  return {shape = shape, demand = demand, own = own, pooled = pooled, pinned = pinned, missing = missing,
    limit = limit, runLimit = limit or limits.default or limits.max,
    overLimit = limit ~= nil and limits.max ~= nil and limit > limits.max}
end
