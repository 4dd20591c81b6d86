-- @include claimsKey
-- @include jobKey

-- The first run of a shape's staged index whose job exists and is staged
-- (id and score), looking past stale entries before it (a run BullMQ
-- removed), at most `budget` of them; nil when there is none. Also returns
-- the stale entries looked past, and whether the index holds no staged run
-- at all once they are dropped. The runs behind the first demand the same,
-- so they fit no sooner, and being newer they are never held while it
-- waits. A run whose job this worker still holds a claim on (a job deleted
-- from under that claim, staged again under the same id) is left to other
-- workers until the old claim has ended.
local function firstStaged(view, stagedKey, budget)
  local entries = redis.call("ZRANGE", stagedKey, 0, budget, "WITHSCORES")
  local stale = {}
  for i = 1, #entries, 2 do
    local id = entries[i]
    if redis.call("HGET", jobKey(view.base, id), "status") == "staged" then
      if redis.call("HEXISTS", claimsKey(view.workerKey), id) == 1 then return nil, nil, stale, false end
      return id, tonumber(entries[i + 1]), stale, false
    end
    if #stale >= budget then return nil, nil, stale, false end
    stale[#stale + 1] = id
  end
  return nil, nil, stale, true
end
