-- @include namespace/tryCall
-- @include namespace/validName

-- How `count` members of a queue state, from position `from` on, stand by
-- fitq status, for the states whose size does not tell it (runCounts):
-- `parked` (waiting-children: held, or staged and parked there) and
-- `ended` (failed: each ended status but completed). Returns a table
-- status -> count, and how many members were read. A member written by
-- hand (no run id, no job hash) counts as its state says.
local function statusesInState(base, state, from, count)
  local ended = state == "ended"
  local ids = redis.call("ZRANGE", ended and KEY.queueFailed(base) or KEY.queueWaitingChildren(base), from, from + count - 1)
  local counts = {}
  for _, id in ipairs(ids) do
    local status
    if ended then
      status = validName(id) and tryCall("HGET", KEY.run(base, id), "status") or "failed"
    else
      status = validName(id) and tryCall("HEXISTS", KEY.run(base, id), "held") == 1 and "held" or "staged"
    end
    counts[status] = (counts[status] or 0) + 1
  end
  return counts, #ids
end
