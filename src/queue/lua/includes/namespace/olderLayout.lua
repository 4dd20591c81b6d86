-- Whether the namespace holds runs stored by fitq before runs were BullMQ
-- jobs (its `runs` zset): they cannot be read or claimed as jobs.
local function olderLayout(base)
  return redis.call("EXISTS", KEY.olderRuns(base)) == 1
end
