-- @include stats/runTimeBounds

-- Counts `ms` into the run statistics' histogram `name` (`wait`,
-- `duration:<status>`) with the bounds of `kind` (see runTimeBounds).
local function observeRunTime(base, name, kind, ms)
  if ms < 0 then ms = 0 end
  local bounds = runTimeBounds(kind)
  local bucket = #bounds + 1
  for i, bound in ipairs(bounds) do
    if ms <= bound then
      bucket = i
      break
    end
  end
  redis.call("HINCRBY", KEY.stats(base), name .. ":" .. bucket, 1)
  redis.call("HINCRBY", KEY.stats(base), name .. ":sum", string.format("%.0f", ms))
end
