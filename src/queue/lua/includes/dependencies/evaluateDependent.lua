-- @include lifecycle/isEnded
-- @include lifecycle/runData
-- @include dependencies/depsState
-- @include lifecycle/placeStaged
-- @include namespace/publish
-- @include lifecycle/cancelParkedRun
-- @include arrays/causeArray

-- Run `cause` ended (or was removed), or what the runs of array `cause`
-- (arrayCause) may conclude changed: records how the run ended on its
-- dependent `runId` (`dep:<cause>`; an array's runs are counted in its
-- tally instead), and if the dependent still waits for its dependencies,
-- judges them again: met, it goes where it belongs now (the fit index,
-- unless held or not begun yet); never to be met, it ends canceled with the
-- reason, or, staged with --keep-if-dependency-fails, stays parked saying
-- so (`depsNever`). Returns true when it ended (its own dependents are
-- next), and then its array's cause when the runs waiting for that are to
-- be judged too.
local function evaluateDependent(base, runId, cause, now, logMaxLines)
  now = tonumber(now)
  local key = KEY.run(base, runId)
  if not causeArray(cause) then
    local ended = redis.call("HMGET", KEY.run(base, cause), "status", "reason")
    if isEnded(ended[1] or "") then
      redis.call("HSET", key, "dep:" .. cause, ended[1] .. "|" .. (ended[2] or ""))
    elseif not ended[1] then
      redis.call("HSET", key, "dep:" .. cause, "removed|")
    end
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
      return true, cancelParkedRun(base, runId, detail, cause, now, logMaxLines)
    end
  else
    -- (Kept as never met before a dependency was restarted: it waits again.)
    redis.call("HDEL", key, "depsNever")
  end
  return false
end
