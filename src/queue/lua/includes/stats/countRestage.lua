-- A run staged again by fitq, in the run statistics (see runTimeBounds):
-- `cause` worker (its worker died or was stopped under it) or retry (retry
-- on failure).
local function countRestage(base, cause)
  redis.call("HINCRBY", KEY.stats(base), "restaged:" .. cause, 1)
end
