-- @include shape/indexShape

-- Takes a staged run out of its shape's index (see indexShape for its
-- group) and its hold. A claim does only this: activateJob already took
-- its job out of BullMQ's staged order, and a run of the fit index is
-- never parked. Returns what indexShape returns.
local function unindex(base, runId, shape)
  redis.call("ZREM", KEY.staged(base, shape), runId)
  local version, was, score = indexShape(base, shape)
  redis.call("HDEL", KEY.holds(base), runId)
  return version, was, score
end
