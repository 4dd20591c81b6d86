-- @include jobKey

-- The namespace's run statistics (`<base>stats`, a hash of integers), which
-- fitq's /metrics turns into Prometheus counters and histograms: only the
-- scripts that start, end and re-stage runs see every run, whichever
-- process (a worker, a reaping client, a cancel) made the change, and the
-- counts outlive the runs (retention) and the workers. Fields:
--   ended:<status>          runs that ended so (completed, failed, canceled,
--                           lost, rejected, timeout)
--   restaged:<cause>        runs staged again by fitq: `worker` (their worker
--                           died or was stopped under them), `retry` (retry on failure)
--   wait:<i>, wait:sum      a run's first start: how many waited within the
--                           i-th bound of WAIT_BOUNDS_MS since being staged
--                           (i = #bounds + 1: longer), and the ms summed
--   duration:<status>:<i>, duration:<status>:sum   the same for how long a
--                           run that ended so had run (started to ended)
-- Buckets are counted apart (not cumulative): two HINCRBYs per observation.
-- The bounds are here only: readMetrics replies them.
local WAIT_BOUNDS_MS = {100, 500, 1000, 5000, 15000, 60000, 300000, 900000, 3600000, 14400000, 86400000}
local DURATION_BOUNDS_MS = {1000, 5000, 15000, 60000, 300000, 900000, 3600000, 14400000, 43200000, 86400000, 259200000}

local function observeRunTime(base, name, bounds, ms)
  if ms < 0 then ms = 0 end
  local bucket = #bounds + 1
  for i, bound in ipairs(bounds) do
    if ms <= bound then
      bucket = i
      break
    end
  end
  redis.call("HINCRBY", base .. "stats", name .. ":" .. bucket, 1)
  redis.call("HINCRBY", base .. "stats", name .. ":sum", string.format("%.0f", ms))
end

-- A run just claimed (its job activated at `now`): its wait, on its first start only.
local function countRunStart(base, runId, now)
  local run = redis.call("HMGET", jobKey(base, runId), "ats", "timestamp")
  local staged = tonumber(run[2] or "")
  if run[1] ~= "1" or not staged then return end
  observeRunTime(base, "wait", WAIT_BOUNDS_MS, now - staged)
end

-- A run ending with `status` at `finishedOn`: counted, and how long it ran if it started.
local function countRunEnd(base, runId, status, finishedOn)
  redis.call("HINCRBY", base .. "stats", "ended:" .. status, 1)
  local started = tonumber(redis.call("HGET", jobKey(base, runId), "processedOn") or "")
  local ended = tonumber(finishedOn)
  if started and ended then observeRunTime(base, "duration:" .. status, DURATION_BOUNDS_MS, ended - started) end
end

-- A run staged again by fitq (`cause`: worker or retry).
local function countRestage(base, cause)
  redis.call("HINCRBY", base .. "stats", "restaged:" .. cause, 1)
end
