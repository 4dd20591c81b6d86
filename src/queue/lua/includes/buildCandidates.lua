-- @include firstStaged
-- @include fitsTotal
-- @include shapeDemand

-- Stale staged index entries a claim looks past (and claimRun drops) at most.
local STALE_LIMIT = 100

-- The candidates, oldest first (lowest score): the first runs of every shape
-- that fits the worker's total capacity, each as shapeDemand gives it with
-- its `id` and `score`. Also returns the shapes ignored for resources the
-- worker does not declare ("shape|missing,names|version", version changing
-- when runs of the shape come or go), the stale index entries looked past
-- ({stagedKey, runId}, at most STALE_LIMIT in all) and the shapes whose
-- index holds no staged run.
local function buildCandidates(view)
  local candidates, ignored, stale, emptied = {}, {}, {}, {}
  for _, shape in ipairs(redis.call("SMEMBERS", view.base .. "shapes")) do
    local wanted = shapeDemand(view, shape)
    local stagedKey = view.base .. "staged:" .. shape
    if #wanted.missing > 0 then
      local newest = redis.call("ZRANGE", stagedKey, -1, -1)[1] or ""
      ignored[#ignored + 1] = shape .. "|" .. table.concat(wanted.missing, ",") .. "|" ..
        redis.call("ZCARD", stagedKey) .. ":" .. newest
    elseif fitsTotal(view, wanted) then
      local id, score, looked, empty = firstStaged(view, stagedKey, STALE_LIMIT - #stale)
      for _, runId in ipairs(looked) do stale[#stale + 1] = {stagedKey, runId} end
      if empty then emptied[#emptied + 1] = shape end
      if id then
        wanted.id, wanted.score = id, score
        candidates[#candidates + 1] = wanted
      end
    end
  end
  table.sort(candidates, function(a, b) return a.score < b.score end)
  return candidates, ignored, stale, emptied
end
