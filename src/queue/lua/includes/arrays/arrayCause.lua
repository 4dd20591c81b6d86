-- The cause that stands for a whole array where runs wait for it
-- (`--after ARRAY`): "array:<id>" (no run id holds a colon). The set of
-- runs waiting for the array is `dependents:array:<id>`, its turn in
-- `dependents-pending` is this name, and a run canceled because of it
-- records it as `canceledFor`.
local function arrayCause(array)
  return "array:" .. array
end
