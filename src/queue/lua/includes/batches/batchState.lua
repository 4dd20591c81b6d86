-- @include namespace/serverNow
-- @include namespace/tryCall

-- The state of the batch a run was staged in (its job's `batch` field):
-- nil when it has none or its batch was committed (it is no longer in
-- `batches`): the run is there for every reader; "open" while its stager
-- still sends its chunks (readers treat the run as not there); "expired"
-- once its deadline passed uncommitted (its stager died: the run is
-- garbage, removed as claims come across it). Also returns the deadline
-- (epoch ms, the Redis server's clock) and how many of its runs are left.
local function batchState(base, batchId)
  if not batchId then return nil end
  -- (A `batches` key written by hand as another type holds no batch.)
  local value = tryCall("HGET", KEY.batches(base), batchId)
  if type(value) ~= "string" then return nil end
  local deadline, count = string.match(value, "^(%d+) (%d+)$")
  deadline, count = tonumber(deadline) or 0, tonumber(count) or 0
  return deadline > serverNow() and "open" or "expired", deadline, count
end
