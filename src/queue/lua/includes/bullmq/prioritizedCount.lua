-- How many jobs the staged order (prioritized) holds.
local function prioritizedCount(base)
  return redis.call("ZCARD", KEY.queuePrioritized(base))
end
