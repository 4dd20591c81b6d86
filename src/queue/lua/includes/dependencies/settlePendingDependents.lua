-- @include dependencies/evaluateDependent
-- @include dependencies/settleDependents
-- @include arrays/causeArray

-- Works through `dependents-pending` (see settleDependents): judges about
-- `budget` more dependents of the runs (and arrays, see arrayCause) left
-- there, resuming each one's set where the last call stopped (SSCAN
-- cursor), and settles the dependents of those it cancels, out of the
-- same budget (a run canceled here whose own dependents are many leaves
-- them in the hash too, not judged in this call). It takes the
-- causes an HSCAN from the start gives (a hundred or so, however many are
-- left: a cause done leaves the hash, so the next call meets others).
-- Returns whether work is left.
local function settlePendingDependents(base, now, logMaxLines, budget)
  local pendingKey = KEY.dependentsPending(base)
  local flat = redis.call("HSCAN", pendingKey, "0", "COUNT", 100)[2]
  for i = 1, #flat, 2 do
    if budget <= 0 then break end
    local cause, cursor = flat[i], flat[i + 1]
    local reply = redis.call("SSCAN", KEY.dependents(base, cause), cursor, "COUNT", math.max(1, math.min(budget, 100)))
    for _, dependent in ipairs(reply[2]) do
      budget = budget - 1
      local canceled, itsArray = evaluateDependent(base, dependent, cause, now, logMaxLines)
      -- Its own dependents out of the same budget (those beyond it wait in the hash too).
      if canceled then budget = budget - settleDependents(base, dependent, now, logMaxLines, itsArray, math.max(budget, 0)) end
    end
    if reply[1] == "0" then
      redis.call("HDEL", pendingKey, cause)
      -- A removed run's (or array's) set was kept for this: it goes now.
      local array = causeArray(cause)
      local gone = array and redis.call("HEXISTS", KEY.arrays(base), array) == 0
        or not array and redis.call("EXISTS", KEY.run(base, cause)) == 0
      if gone then redis.call("DEL", KEY.dependents(base, cause)) end
    else
      redis.call("HSET", pendingKey, cause, reply[1])
    end
  end
  return redis.call("EXISTS", pendingKey) == 1
end
