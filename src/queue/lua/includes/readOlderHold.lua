-- @include jobKey
-- @include liveWorker
-- @include parseResourceList
-- @include splitDemand
-- @include splitShape
-- @include storedShape

-- The oldest run another live worker than `name` holds (lowest score): its
-- id, score, worker and pool share (`pooled`); nil when there is none. A
-- worker holds a blocked head only if it is older still, and later runs on
-- any worker leave this run its share of the pool. A newer hold elsewhere no
-- longer counts: its worker drops it on its next claim.
local function readOlderHold(base, holdsKey, workersKey, name, clock, pool)
  local olderHold
  local holds = redis.call("HGETALL", holdsKey)
  for i = 1, #holds, 2 do
    if holds[i + 1] ~= name and liveWorker(workersKey, holds[i + 1], clock) then
      local runKey = jobKey(base, holds[i])
      local score = tonumber(redis.call("HGET", runKey, "score"))
      if score and (olderHold == nil or score < olderHold.score) then
        olderHold = {id = holds[i], worker = holds[i + 1], score = score, runKey = runKey}
      end
    end
  end
  if olderHold then
    local demandText = splitShape(storedShape(olderHold.runKey))
    local _, pooled = splitDemand(pool, parseResourceList(demandText))
    olderHold.pooled = pooled
  end
  return olderHold
end
