-- How dependency `dep` of run `runId` stands: its status and reason as the
-- run recorded them when the dependency ended (field `dep:<id>`, so a
-- dependency removed since, by retention, still counts as it ended), else
-- as the dependency's job says now; "removed" for a dependency that is gone.
local function depStatus(base, runId, dep)
  local recorded = redis.call("HGET", KEY.run(base, runId), "dep:" .. dep)
  if recorded then
    local status, reason = string.match(recorded, "^([^|]*)|(.*)$")
    return status or recorded, reason or ""
  end
  local run = redis.call("HMGET", KEY.run(base, dep), "status", "reason")
  if not run[1] then return "removed", "" end
  return run[1], run[2] or ""
end
