-- When a job was activated (its run started: `processedOn`, epoch ms), or nil.
local function jobStartedAt(base, runId)
  return tonumber(redis.call("HGET", KEY.run(base, runId), "processedOn") or "")
end
