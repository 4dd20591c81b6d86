-- @include lifecycle/orderBlock

-- Puts a run in the order index (`order:<block>`, score its staging
-- number): how `fitq runs` and the dashboard page through runs in staging
-- order without reading them all.
local function orderRun(base, runId, seq)
  redis.call("ZADD", KEY.order(base, orderBlock(seq)), seq, runId)
end
