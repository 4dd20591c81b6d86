-- When a job just activated was added (`timestamp`, epoch ms) if this was its
-- first activation (its count of starts, `ats`, is 1); else nil.
local function firstActivation(base, runId)
  local job = redis.call("HMGET", KEY.run(base, runId), "ats", "timestamp")
  local added = tonumber(job[2] or "")
  if job[1] ~= "1" then return nil end
  return added
end
