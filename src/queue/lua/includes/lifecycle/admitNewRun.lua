-- @include lifecycle/isEnded
-- @include lifecycle/runData
-- @include dependencies/depsState
-- @include lifecycle/placeStaged
-- @include lifecycle/cancelParkedRun
-- @include arrays/arrayCause

-- A run just staged whose job data (`data`, its JSON text) says it may not
-- start at once: held (`hold`), begins later (`begin`, epoch ms, or `delay`,
-- ms from `now`), or depends on runs (`after`, see depsState). Records that
-- on its job (`held`, `beginAt`, `waitDeps`), adds it to each dependency's
-- `dependents:<id>` (an array's: `dependents:array:<id>`, see arrayCause),
-- records the dependencies that have already ended
-- (`dep:<id>`), and puts it where it belongs (placeStaged). Dependencies
-- that can never be met cancel it at once (cancelParkedRun) unless it has
-- `keepIfDependencyFails`. Returns false, doing nothing, for a run that
-- says none of this (the caller stages it as any run).
local function admitNewRun(base, runId, data, now)
  if not (string.find(data, '"hold"', 1, true) or string.find(data, '"begin"', 1, true) or
      string.find(data, '"delay"', 1, true) or string.find(data, '"after"', 1, true)) then
    return false
  end
  local decoded = runData(base, runId)
  local key = KEY.run(base, runId)
  if decoded.hold == true then redis.call("HSET", key, "held", "1") end
  local beginAt = tonumber(decoded.begin) or (tonumber(decoded.delay) and now + tonumber(decoded.delay))
  if beginAt and beginAt > now then redis.call("HSET", key, "beginAt", string.format("%.0f", beginAt)) end
  if type(decoded.after) == "table" and #decoded.after > 0 then
    for _, group in ipairs(decoded.after) do
      for _, dep in ipairs(type(group.ids) == "table" and group.ids or {}) do
        redis.call("SADD", KEY.dependents(base, dep), runId)
        local ended = redis.call("HMGET", KEY.run(base, dep), "status", "reason")
        if isEnded(ended[1] or "") then redis.call("HSET", key, "dep:" .. dep, ended[1] .. "|" .. (ended[2] or "")) end
      end
      for _, array in ipairs(type(group.arrays) == "table" and group.arrays or {}) do
        redis.call("SADD", KEY.dependents(base, arrayCause(array)), runId)
      end
    end
    local state, detail, cause = depsState(base, runId)
    if state == "never" and decoded.keepIfDependencyFails ~= true then
      cancelParkedRun(base, runId, detail, cause, now, 1000)
      return true
    end
    if state ~= "met" then redis.call("HSET", key, "waitDeps", "1") end
    if state == "never" then redis.call("HSET", key, "depsNever", detail) end
  end
  placeStaged(base, runId, now)
  return true
end
