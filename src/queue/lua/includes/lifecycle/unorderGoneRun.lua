-- @include lifecycle/orderBlock

-- Takes a run whose job hash is gone (BullMQ's API removed it) out of the
-- order index (see orderRun): its staging number is lost with the hash, so
-- out of every block a run may be in (one per 100,000 runs ever staged).
local function unorderGoneRun(base, runId)
  local last = tonumber(redis.call("GET", KEY.seq(base)) or "0") or 0
  for block = 0, tonumber(orderBlock(last)) do redis.call("ZREM", KEY.order(base, tostring(block)), runId) end
end
