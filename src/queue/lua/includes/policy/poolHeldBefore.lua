-- What the older hold elsewhere holds of the pool, for a run with this key
-- (its place in the claim's order, fairshare/fairKey).
local function poolHeldBefore(view, key)
  local held = {}
  local olderHold = view.olderHold
  if olderHold and olderHold.key < key then
    for _, item in ipairs(olderHold.pooled) do held[item[1]] = item[2] end
  end
  return held
end
