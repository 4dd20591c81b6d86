-- @include jobKey
-- @include tryCall
-- @include dropArray
-- @include isEnded
-- @include tallyArrayRun

-- A run about to be removed leaves its array (its job's `array` field): the
-- array's count in `arrays` goes down, and with its last run the array goes
-- (dropArray). Removed before it ended, it counts in the array's tally as a
-- run that did not complete, and the runs waiting for the array are left to
-- be judged (`dependents-pending`); removed after, it still counts as it
-- ended. Keys of another type (written by hand) are left alone.
local function forgetArrayRun(base, runId)
  local array = tryCall("HGET", jobKey(base, runId), "array")
  if type(array) ~= "string" then return end
  local status = tryCall("HGET", jobKey(base, runId), "status")
  if type(status) == "string" and not isEnded(status) then
    local cause = tallyArrayRun(base, runId, "open", "notok", "removed", "")
    if cause then redis.call("HSET", base .. "dependents-pending", cause, "0") end
  end
  local left = tryCall("HINCRBY", base .. "arrays", array, -1)
  if left and left <= 0 then dropArray(base, array) end
end
