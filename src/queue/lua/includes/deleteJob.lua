-- @include queueKey
-- @include jobKey
-- @include logKeys

-- Deletes a job's keys (its hash, lock, output, stream or packed, BullMQ's
-- logs list) and its place in every state.
local function deleteJob(base, runId)
  local key = jobKey(base, runId)
  for _, state in ipairs({"prioritized", "completed", "failed"}) do
    redis.call("ZREM", queueKey(base, state), runId)
  end
  redis.call("LREM", queueKey(base, "wait"), 0, runId)
  redis.call("LREM", queueKey(base, "active"), 0, runId)
  local streamKey, packedKey = logKeys(base, runId)
  redis.call("DEL", key, key .. ":lock", key .. ":logs", streamKey, packedKey)
end
