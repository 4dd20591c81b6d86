-- @include lifecycle/orderBlock

-- Takes a run out of the order index (see orderRun), by the staging number
-- its job hash holds (none: it never was in it).
local function unorderRun(base, runId)
  local seq = tonumber(redis.call("HGET", KEY.run(base, runId), "seq") or "")
  if seq then redis.call("ZREM", KEY.order(base, orderBlock(seq)), runId) end
end
