-- The jobs of BullMQ's ended state `state` ("completed" or "failed") that
-- ended before `cutoff` (epoch ms), oldest first, at most `limit`.
local function endedBefore(base, state, cutoff, limit)
  -- (ZRANGEBYSCORE, not ZCOUNT: the commands fitq's ACL rule allows.)
  return redis.call("ZRANGEBYSCORE", state == "completed" and KEY.queueCompleted(base) or KEY.queueFailed(base),
    "-inf", "(" .. cutoff, "LIMIT", 0, limit)
end
