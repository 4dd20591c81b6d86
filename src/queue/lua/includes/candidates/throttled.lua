-- @include amounts/compareAmounts

-- Whether runs of these arrays (ids; a shape's `arrays`, see readShape)
-- wait for their array's limit (`fitq stage --array ...%N`): the array's
-- pool resource `array.<id>` has less than one free. Such runs are no
-- candidates at all: they neither start, nor hold resources as a blocked
-- head, nor block a fifo worker; they come back as soon as a run of their
-- array ends.
local function throttled(pool, arrays)
  for _, array in ipairs(arrays) do
    local name = "array." .. array
    if pool.capacity[name] and compareAmounts(pool.free[name], {1, 0}) < 0 then return true end
  end
  return false
end
