-- @include workers/liveWorker
-- @include candidates/noteDrop
-- @include lifecycle/readRun
-- @include candidates/splitDemand
-- @include shape/parseShape
-- @include fairshare/fairKey

-- The first run, in the claim's order (its `key`, fairshare/fairKey: by
-- priority, fair share, then age), another live worker than `name` holds:
-- its id, key, worker and pool share (`pooled`); nil when there is none. A
-- worker holds a blocked head only if it is older still, and later runs on
-- any worker leave this run its share of the pool. A newer hold elsewhere no
-- longer counts: its worker drops it on its next claim. A hold on a run that
-- is not staged counts for nothing and is dropped (noted in `drops`); so is
-- one written by hand (not a run id, or its key holds no job hash).
local function readOlderHold(base, holdsKey, workersKey, name, clock, pool, drops)
  local olderHold
  local holds = redis.call("HGETALL", holdsKey)
  for i = 1, #holds, 2 do
    local runId, holder = holds[i], holds[i + 1]
    if holder ~= name and liveWorker(workersKey, holder, clock) then
      local run = readRun(base, runId, "status", "score", "shape")
      local score = run and run[1] == "staged" and tonumber(run[2])
      if not score then
        noteDrop(drops, {kind = "hold", member = runId,
          why = (not run and "not a run id whose key holds a job hash") or (run[1] == "staged" and "its run has no score") or nil})
      else
        -- (A shape written by hand demands nothing here: the claim drops its runs.)
        local parsed = parseShape(run[3] or "none")
        local key = fairKey(pool.fair, score, parsed and parsed.user)
        if olderHold == nil or key < olderHold.key then
          olderHold = {id = runId, worker = holder, key = key, parsed = parsed}
        end
      end
    end
  end
  if olderHold then
    local _, pooled = splitDemand(pool, olderHold.parsed and olderHold.parsed.demand or {})
    olderHold.pooled = pooled
  end
  return olderHold
end
