-- @include dropArray
-- @include tryCall

-- Drops what is left of a namespace once it holds nothing (no runs, no
-- workers, no pools, a queue not paused): the staging counter, zeroed pool
-- usage, how far it was reconciled with BullMQ, batches left open by no
-- run, and the queue's event
-- stream, settings, the counters BullMQ's own adds keep, the job
-- metrics and fitq's run statistics, so nothing stays behind.
-- Arrays left without runs (their runs deleted through BullMQ's API, which
-- fitq cannot count) go first, with their pool resources.
-- With no run left no id or order position is in use, so the next run
-- staged may take seq 1 again.
local function forgetIfEmpty(base)
  if redis.call("EXISTS", base .. "ids") == 0 then
    local arrays = tryCall("HGETALL", base .. "arrays") or {}
    for i = 1, #arrays, 2 do dropArray(base, arrays[i]) end
  end
  if redis.call("EXISTS", base .. "ids", base .. "workers", base .. "pool:capacity", base .. "settings") > 0 then return end
  if redis.call("HEXISTS", base .. "runs:meta", "paused") == 1 then return end
  local used = redis.call("HGETALL", base .. "pool:used")
  for i = 2, #used, 2 do
    if used[i] ~= "0" then return end
  end
  redis.call("DEL", base .. "seq", base .. "pool:used", base .. "reconcile", base .. "runs:events", base .. "runs:meta",
    base .. "batches", base .. "stats", base .. "runs:id", base .. "runs:pc", base .. "runs:marker",
    base .. "runs:metrics:completed", base .. "runs:metrics:completed:data",
    base .. "runs:metrics:failed", base .. "runs:metrics:failed:data")
end
