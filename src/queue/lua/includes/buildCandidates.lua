-- @include firstStaged
-- @include fitsTotal
-- @include noteDrop
-- @include shapeDemand
-- @include tryCall
-- @include validShape

-- The candidates, oldest first (lowest score): the first runs of every shape
-- that fits the worker's total capacity, each as shapeDemand gives it with
-- its `id` and `score`. Also returns the shapes ignored for resources the
-- worker does not declare ("shape|missing,names|version", version changing
-- when runs of the shape come or go). What a claim drops on the way (stale
-- and invalid index entries, see firstStaged; members of `shapes` that are
-- no shape, or whose index holds no staged run) is noted in view.drops.
-- A shape whose first run is not found for all there was to drop leaves
-- out every candidate after the entries it looked at: one of its runs may
-- be older, and runs start in order.
local function buildCandidates(view)
  local candidates, ignored = {}, {}
  local horizon = math.huge
  for _, shape in ipairs(redis.call("SMEMBERS", view.base .. "shapes")) do
    local stagedKey = view.base .. "staged:" .. shape
    if not validShape(shape) then
      noteDrop(view.drops, {kind = "shape", member = shape, why = "not a shape"})
    else
      local wanted = shapeDemand(view, shape)
      if #wanted.missing > 0 then
        local count = tryCall("ZCARD", stagedKey)
        if not count or count == 0 then
          noteDrop(view.drops, {kind = "shape", member = shape, why = not count and "its index holds no sorted set" or nil})
        else
          local newest = redis.call("ZRANGE", stagedKey, -1, -1)[1]
          ignored[#ignored + 1] = shape .. "|" .. table.concat(wanted.missing, ",") .. "|" .. count .. ":" .. newest
        end
      elseif fitsTotal(view, wanted) then
        local id, score, unseen = firstStaged(view, shape, stagedKey)
        if id then
          wanted.id, wanted.score = id, score
          candidates[#candidates + 1] = wanted
        elseif unseen then
          horizon = math.min(horizon, unseen)
        end
      end
    end
  end
  table.sort(candidates, function(a, b) return a.score < b.score end)
  while #candidates > 0 and candidates[#candidates].score >= horizon do candidates[#candidates] = nil end
  return candidates, ignored
end
