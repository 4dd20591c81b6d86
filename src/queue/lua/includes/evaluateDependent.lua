-- @include isEnded
-- @include jobKey
-- @include runData
-- @include depsState
-- @include placeStaged
-- @include publish
-- @include cancelParkedRun

-- Run `cause` ended (or was removed): records how on its dependent `runId`
-- (`dep:<cause>`), and if the dependent still waits for its dependencies,
-- judges them again: met, it goes where it belongs now (the fit index,
-- unless held or not begun yet); never to be met, it ends canceled with the
-- reason, or, staged with --keep-if-dependency-fails, stays parked saying
-- so (`depsNever`). Returns true when it ended (its own dependents are next).
local function evaluateDependent(base, runId, cause, now, logMaxLines)
  now = tonumber(now)
  local key = jobKey(base, runId)
  local ended = redis.call("HMGET", jobKey(base, cause), "status", "reason")
  if isEnded(ended[1] or "") then
    redis.call("HSET", key, "dep:" .. cause, ended[1] .. "|" .. (ended[2] or ""))
  elseif not ended[1] then
    redis.call("HSET", key, "dep:" .. cause, "removed|")
  end
  local run = redis.call("HMGET", key, "status", "waitDeps")
  if run[1] ~= "staged" or not run[2] then return false end
  local state, detail = depsState(base, runId)
  if state == "met" then
    redis.call("HDEL", key, "waitDeps", "depsNever")
    if placeStaged(base, runId, now) == "staged" then publish(base, {type = "staged", count = 1}) end
  elseif state == "never" then
    if runData(base, runId).keepIfDependencyFails == true then
      redis.call("HSET", key, "depsNever", detail)
    else
      cancelParkedRun(base, runId, detail, cause, now, logMaxLines)
      return true
    end
  end
  return false
end
