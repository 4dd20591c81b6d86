-- @include bullmq/jobStartedAt

-- Appends the attempt a run just ended (or is re-staged from) to its history
-- (`runs:<id>:attempts`, a list of JSON objects): its number, worker, start
-- and end, status, exit code or signal, reason (`reason`, else the
-- run's), and what it used as its worker measured it (`usage`, JSON).
local function recordAttempt(base, runId, status, endedAt, reason)
  local run = redis.call("HMGET", KEY.run(base, runId), "worker", "exitCode", "signal", "reason", "usage")
  local usage = nil
  if run[5] then
    local decoded, value = pcall(cjson.decode, run[5])
    if decoded and type(value) == "table" then usage = value end
  end
  local attemptsKey = KEY.runAttempts(base, runId)
  redis.call("RPUSH", attemptsKey, cjson.encode({
    attempt = redis.call("LLEN", attemptsKey) + 1, worker = run[1] or nil, startedAt = jobStartedAt(base, runId),
    endedAt = tonumber(endedAt), status = status, exitCode = tonumber(run[2] or ""), signal = run[3] or nil,
    reason = reason or run[4] or nil, usage = usage,
  }))
end
