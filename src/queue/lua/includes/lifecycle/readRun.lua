-- @include namespace/tryCall
-- @include namespace/validName

-- Fields of a run's job hash (HMGET), or nil when runId is no run id (see
-- validName) or its key holds no hash.
local function readRun(base, runId, ...)
  if not validName(runId) then return nil end
  return tryCall("HMGET", KEY.run(base, runId), ...)
end
