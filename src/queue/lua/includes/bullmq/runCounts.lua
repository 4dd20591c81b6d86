-- @include namespace/tryCall
-- @include namespace/validName

-- How many runs are in each state, read from the queue's states (for
-- /metrics): staged (prioritized, delayed, and waiting-children unless
-- held), held, running (active), completed, and, for failed, each status
-- its runs ended with (read from each run). A flat list: status, count.
-- Its cost grows with the runs in waiting-children and in failed.
local function runCounts(base)
  local CHUNK = 1000
  -- Each member of a sorted set, a chunk at a time (a long reply at once would hold much memory).
  local eachMember = function(key, visit)
    local from = 0
    repeat
      local ids = redis.call("ZRANGE", key, from, from + CHUNK - 1)
      for _, id in ipairs(ids) do visit(id) end
      from = from + CHUNK
    until #ids < CHUNK
  end
  local counts = {
    staged = redis.call("ZCARD", KEY.queuePrioritized(base)) + redis.call("ZCARD", KEY.queueDelayed(base)),
    held = 0,
    running = redis.call("LLEN", KEY.queueActive(base)),
    completed = redis.call("ZCARD", KEY.queueCompleted(base)),
  }
  -- (A member written by hand, no run id or no job hash, counts as its set says.)
  local field = function(id, name)
    return validName(id) and tryCall("HGET", KEY.run(base, id), name) or nil
  end
  eachMember(KEY.queueWaitingChildren(base), function(id)
    if field(id, "held") then counts.held = counts.held + 1 else counts.staged = counts.staged + 1 end
  end)
  eachMember(KEY.queueFailed(base), function(id)
    local status = field(id, "status") or "failed"
    counts[status] = (counts[status] or 0) + 1
  end)
  local statuses = {}
  for status, count in pairs(counts) do
    statuses[#statuses + 1] = status
    statuses[#statuses + 1] = count
  end
  return statuses
end
