-- @include candidates/fitsTotal
-- @include candidates/shapeDemand

-- Whether runs of a shape (`parsed`, as parseShape read it) can ever fit a
-- worker of a class (workerClass): the claim's own judgement (shapeDemand,
-- fitsTotal) on the class's capacity, devices and time limit, passing every
-- demand on a resource the class lacks or the pool holds. The pool's
-- amounts and resources change (arrays' limits come and go) without the
-- fit index knowing, so the claim judges those for each candidate: a fit
-- index may hold a shape that does not fit, never lack one that does.
local UNBOUNDED = {9007199254740991, 0}
local function classFits(class, shape, parsed)
  if class.view == nil then
    local capacity, pooled = class.capacity, class.pooled
    local shares = {}
    for _, id in ipairs(class.deviceIds) do shares[id] = {1, 0} end
    local poolCapacity = setmetatable({}, {__index = function(_, name)
      if capacity[name] == nil or pooled[name] then return UNBOUNDED end
      return nil
    end})
    class.view = {capacity = capacity, pool = {capacity = poolCapacity}, devices = {ids = class.deviceIds, shares = shares},
      limits = {max = class.max}}
  end
  return fitsTotal(class.view, shapeDemand(class.view, shape, parsed))
end
