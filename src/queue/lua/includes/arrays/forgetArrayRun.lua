-- @include namespace/tryCall
-- @include arrays/dropArray
-- @include lifecycle/isEnded
-- @include arrays/tallyArrayRun

-- A run about to be removed leaves its array (its job's `array` field): the
-- array's count in `arrays` goes down, and with its last run the array goes
-- (dropArray). Removed before it ended, it counts in the array's tally as a
-- run that did not complete, and the runs waiting for the array are left to
-- be judged (`dependents-pending`); removed after, it still counts as it
-- ended. Keys of another type (written by hand) are left alone.
local function forgetArrayRun(base, runId)
  local array = tryCall("HGET", KEY.run(base, runId), "array")
  if type(array) ~= "string" then return end
  local status = tryCall("HGET", KEY.run(base, runId), "status")
  if type(status) == "string" and not isEnded(status) then
    local cause = tallyArrayRun(base, runId, "open", "notok", "removed", "")
    if cause then redis.call("HSET", KEY.dependentsPending(base), cause, "0") end
  end
  local left = tryCall("HINCRBY", KEY.arrays(base), array, -1)
  if left and left <= 0 then dropArray(base, array) end
end
