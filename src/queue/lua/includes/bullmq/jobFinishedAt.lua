-- When a job ended (`finishedOn`, epoch ms, as stored), or false.
local function jobFinishedAt(base, runId)
  return redis.call("HGET", KEY.run(base, runId), "finishedOn")
end
