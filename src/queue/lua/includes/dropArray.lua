-- @include arrayCause

-- Forgets an array that has no run left: its count in `arrays`, its tally
-- (see arrayTally), its pool resource `array.<id>` (the %N limit), with its
-- usage once that is zero, and the set of runs waiting for it (unless they
-- are still to be judged: settlePendingDependents deletes it then).
local function dropArray(base, array)
  redis.call("HDEL", base .. "arrays", array)
  redis.call("HDEL", base .. "arrays:tally", array .. ":open", array .. ":ok", array .. ":notok", array .. ":last")
  local resource = "array." .. array
  redis.call("HDEL", base .. "pool:capacity", resource)
  local used = redis.call("HGET", base .. "pool:used", resource)
  if used == false or used == "0" then redis.call("HDEL", base .. "pool:used", resource) end
  local cause = arrayCause(array)
  if redis.call("HEXISTS", base .. "dependents-pending", cause) == 0 then redis.call("DEL", base .. "dependents:" .. cause) end
end
