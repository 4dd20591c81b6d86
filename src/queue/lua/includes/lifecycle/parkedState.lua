-- Why a staged run may not start yet, from its job's fields: "held" (`fitq
-- hold`), "deps" (its dependencies are not met yet, or never will be and it
-- was kept), "delayed" (it begins later than `now`, returned with its begin
-- time), or nil: it may start now, so it belongs in the fit index.
local function parkedState(base, runId, now)
  local run = redis.call("HMGET", KEY.run(base, runId), "held", "waitDeps", "beginAt")
  if run[1] == "1" then return "held" end
  if run[2] then return "deps" end
  local beginAt = tonumber(run[3] or "")
  if beginAt and beginAt > now then return "delayed", beginAt end
  return nil
end
