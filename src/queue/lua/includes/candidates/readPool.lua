-- @include amounts/parseAmount
-- @include amounts/subtractAmounts

-- The pool: its capacity and what is free of it (resource -> amount), read
-- a resource at a time, when first asked for: the pool holds a resource
-- per array with a limit (`array.<id>`), thousands of them, of which a call
-- needs a few. Only indexed, never walked with pairs.
local function readPool(poolCapacityKey, poolUsedKey)
  local known = {}
  local entry = function(name)
    local found = known[name]
    if found == nil then
      local total = redis.call("HGET", poolCapacityKey, name)
      found = false
      if total then
        local capacity = parseAmount(total)
        found = {capacity = capacity, free = subtractAmounts(capacity, parseAmount(redis.call("HGET", poolUsedKey, name) or "0"))}
      end
      known[name] = found
    end
    return found
  end
  return {
    -- Users' quotas, read when first asked for (quotas/quotaOf), kept with the pool: one reading per call.
    quotas = {},
    capacity = setmetatable({}, {__index = function(_, name) local e = entry(name); return e and e.capacity or nil end}),
    free = setmetatable({}, {__index = function(_, name) local e = entry(name); return e and e.free or nil end}),
  }
end
