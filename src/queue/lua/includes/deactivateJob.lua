-- @include queueKey
-- @include jobKey

-- Takes an active job out of active and drops its lock (it ends, or goes
-- back to staged).
local function deactivateJob(base, runId)
  redis.call("LREM", queueKey(base, "active"), -1, runId)
  redis.call("DEL", jobKey(base, runId) .. ":lock")
end
