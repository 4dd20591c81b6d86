-- @include jobKey
-- @include tryCall
-- @include dropArray

-- A run about to be removed leaves its array (its job's `array` field): the
-- array's count in `arrays` goes down, and with its last run the array goes
-- (dropArray). Keys of another type (written by hand) are left alone.
local function forgetArrayRun(base, runId)
  local array = tryCall("HGET", jobKey(base, runId), "array")
  if type(array) ~= "string" then return end
  local left = tryCall("HINCRBY", base .. "arrays", array, -1)
  if left and left <= 0 then dropArray(base, array) end
end
