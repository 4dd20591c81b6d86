-- @include queueKey
-- @include jobKey
-- @include logKeys

-- Deletes a job's keys (its hash, lock, output, stream or packed, BullMQ's
-- logs list, its history of attempts, the set of runs depending on it) and
-- its place in every state.
local function deleteJob(base, runId)
  local key = jobKey(base, runId)
  for _, state in ipairs({"prioritized", "completed", "failed", "delayed", "waiting-children"}) do
    redis.call("ZREM", queueKey(base, state), runId)
  end
  redis.call("LREM", queueKey(base, "wait"), 0, runId)
  redis.call("LREM", queueKey(base, "active"), 0, runId)
  local streamKey, packedKey = logKeys(base, runId)
  redis.call("DEL", key, key .. ":lock", key .. ":logs", streamKey, packedKey, key .. ":attempts")
  -- (Kept while its dependents are still to be judged: settlePendingDependents deletes it.)
  if redis.call("HEXISTS", base .. "dependents-pending", runId) == 0 then redis.call("DEL", base .. "dependents:" .. runId) end
end
