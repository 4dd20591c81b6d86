-- @include bullmq/emitEvent

-- Parks a job until `beginAt` (epoch ms) in BullMQ's delayed, scored as
-- BullMQ encodes it: begin time * 4096 + its sequence number mod 4096; its
-- `delay` (ms from `now`) and BullMQ's `delayed` event, unless it is there
-- at that score already. Out of waiting-children, if it was there.
local function delayJob(base, runId, beginAt, seq, now)
  local delayedKey = KEY.queueDelayed(base)
  redis.call("ZREM", KEY.queueWaitingChildren(base), runId)
  local delayedScore = string.format("%.0f", beginAt * 4096 + seq % 4096)
  if tonumber(redis.call("ZSCORE", delayedKey, runId) or "") ~= tonumber(delayedScore) then
    redis.call("ZADD", delayedKey, delayedScore, runId)
    redis.call("HSET", KEY.run(base, runId), "delay", string.format("%.0f", beginAt - now))
    emitEvent(base, "delayed", runId, "delay", string.format("%.0f", beginAt))
  end
end
