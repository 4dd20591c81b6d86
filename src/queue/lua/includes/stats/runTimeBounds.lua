-- The bucket bounds (ms) of the namespace's run statistics (`<base>stats`,
-- a hash of integers, which fitq's /metrics turns into Prometheus counters
-- and histograms; readMetrics replies these bounds, so they are set here
-- only): `wait`, from staging to a run's first start; `duration`, from
-- start to end. The statistics are kept by the scripts that start, end and
-- re-stage runs, which see every run whichever process made the change (a
-- worker, a reaping client, a cancel), and outlive the runs (retention)
-- and the workers. Fields:
--   ended:<status>        runs that ended so (completed, failed, canceled,
--                         lost, rejected, timeout): countRunEnd
--   restaged:<cause>      runs staged again by fitq: `worker` (their worker
--                         died or was stopped under them), `retry` (retry on
--                         failure): countRestage
--   wait:<i>, wait:sum    runs whose wait was within the i-th bound (i =
--                         #bounds + 1: longer), and the ms summed: countRunStart
--   duration:<status>:<i>, duration:<status>:sum   the same for how long runs
--                         that ended so had run: countRunEnd
-- Buckets are counted apart (not cumulative): two HINCRBYs per observation.
local RUN_TIME_BOUNDS_MS = {
  wait = {100, 500, 1000, 5000, 15000, 60000, 300000, 900000, 3600000, 14400000, 86400000},
  duration = {1000, 5000, 15000, 60000, 300000, 900000, 3600000, 14400000, 43200000, 86400000, 259200000},
}

local function runTimeBounds(kind)
  return RUN_TIME_BOUNDS_MS[kind]
end
