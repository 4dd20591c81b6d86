-- @include jobKey

-- Appends the attempt a run just ended (or is re-staged from) to its history
-- (`runs:<id>:attempts`, a list of JSON objects): its number, worker, start
-- and end, status, exit code or signal, and reason (`reason`, else the
-- run's).
local function recordAttempt(base, runId, status, endedAt, reason)
  local key = jobKey(base, runId)
  local run = redis.call("HMGET", key, "worker", "processedOn", "exitCode", "signal", "reason")
  local attemptsKey = key .. ":attempts"
  redis.call("RPUSH", attemptsKey, cjson.encode({
    attempt = redis.call("LLEN", attemptsKey) + 1, worker = run[1] or nil, startedAt = tonumber(run[2] or ""),
    endedAt = tonumber(endedAt), status = status, exitCode = tonumber(run[3] or ""), signal = run[4] or nil,
    reason = reason or run[5] or nil,
  }))
end
