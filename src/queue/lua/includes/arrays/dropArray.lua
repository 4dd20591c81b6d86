-- @include arrays/arrayCause
-- @include arrays/unparkArray

-- Forgets an array that has no run left: its count in `arrays`, its tally
-- (see arrayTally), its pool resource `array.<id>` (the %N limit), with its
-- usage once that is zero, and the set of runs waiting for it (unless they
-- are still to be judged: settlePendingDependents deletes it then).
local function dropArray(base, array)
  redis.call("HDEL", KEY.arrays(base), array)
  redis.call("HDEL", KEY.arrayTally(base), array .. ":open", array .. ":ok", array .. ":notok", array .. ":last")
  local resource = "array." .. array
  redis.call("HDEL", KEY.poolCapacity(base), resource)
  local used = redis.call("HGET", KEY.poolUsed(base), resource)
  if used == false or used == "0" then redis.call("HDEL", KEY.poolUsed(base), resource) end
  unparkArray(base, array)
  local cause = arrayCause(array)
  if redis.call("HEXISTS", KEY.dependentsPending(base), cause) == 0 then redis.call("DEL", KEY.dependents(base, cause)) end
end
