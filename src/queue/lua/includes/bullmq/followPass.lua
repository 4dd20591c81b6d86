-- @include bullmq/followJob

-- Reconciling (see reconcileRuns), the full pass, for what BullMQ did that
-- emits no event (changePriority, drain) or events that name no job (clean)
-- or were lost: it looks at every run id of `ids`, then every job of
-- prioritized, then of delayed, with followJob, as far as the call's budget
-- goes. `pass` says where it is ("ids:<last id>", "prioritized:<rank>",
-- "delayed:<rank>"); returns where it stopped, nil when done.
local function followPass(r, pass)
  local base = r.base
  while pass and r.work > 0 do
    local phase, position = string.match(pass, "^(%a+):(.*)$")
    local limit = math.ceil(r.work)
    if phase == "ids" then
      local ids = redis.call("ZRANGE", KEY.ids(base), position == "" and "-" or ("(" .. position), "+", "BYLEX", "LIMIT", 0, limit)
      for _, runId in ipairs(ids) do
        followJob(r, runId)
        position = runId
      end
      pass = #ids < limit and "prioritized:0" or ("ids:" .. position)
    elseif phase == "prioritized" then
      local rank = tonumber(position) or 0
      local ids = redis.call("ZRANGE", KEY.queuePrioritized(base), rank, rank + limit - 1)
      for _, runId in ipairs(ids) do followJob(r, runId) end
      if #ids < limit then pass = "delayed:0" else pass = "prioritized:" .. (rank + #ids) end
    elseif phase == "delayed" then
      local rank = tonumber(position) or 0
      local ids = redis.call("ZRANGE", KEY.queueDelayed(base), rank, rank + limit - 1)
      for _, runId in ipairs(ids) do followJob(r, runId) end
      if #ids < limit then pass = nil else pass = "delayed:" .. (rank + #ids) end
    else
      pass = nil
    end
  end
  return pass
end
