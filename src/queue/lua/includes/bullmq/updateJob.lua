-- @include bullmq/bullPriority

-- Rewrites a waiting job's `data` and its priority (`priority`, and
-- `opts.priority`, the rest of its opts kept; unreadable opts are replaced),
-- as fitq update edits a staged run.
local function updateJob(base, runId, data, priority)
  local key = KEY.run(base, runId)
  local bull = bullPriority(priority)
  local ok, opts = pcall(cjson.decode, redis.call("HGET", key, "opts") or "")
  if not ok or type(opts) ~= "table" then opts = {} end
  opts.priority = bull
  redis.call("HSET", key, "data", data, "opts", cjson.encode(opts), "priority", bull)
end
