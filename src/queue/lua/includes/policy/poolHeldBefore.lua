-- What the older hold elsewhere holds of the pool, for a run with this score.
local function poolHeldBefore(view, score)
  local held = {}
  local olderHold = view.olderHold
  if olderHold and olderHold.score < score then
    for _, item in ipairs(olderHold.pooled) do held[item[1]] = item[2] end
  end
  return held
end
