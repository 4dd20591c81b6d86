-- @include arrays/arrayTally

-- Whether an array has staged (held too) or running runs, by its tally; an
-- array staged by an older fitq, which has none, while it has runs at all.
local function arrayGoing(base, array)
  local tally = arrayTally(base, array)
  if tally then return tally.open > 0 end
  return redis.call("HEXISTS", KEY.arrays(base), array) == 1
end
