-- @include namespace/tryCall

-- Renews a job's lock for `ms` if it is still held under `token`.
local function extendLock(base, runId, token, ms)
  local lockKey = KEY.runLock(base, runId)
  if tryCall("GET", lockKey) == token then redis.call("PEXPIRE", lockKey, ms) end
end
