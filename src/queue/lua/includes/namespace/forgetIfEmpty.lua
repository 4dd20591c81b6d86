-- @include arrays/dropArray
-- @include bullmq/forgetQueue
-- @include bullmq/queuePaused
-- @include namespace/tryCall

-- Drops what is left of a namespace once it holds nothing (no runs, no
-- workers, no pools, a queue not paused): the staging counter, zeroed pool
-- usage, how far it was reconciled with BullMQ, batches left open by no
-- run, and the queue's event
-- stream, settings, the counters BullMQ's own adds keep, the job
-- metrics and fitq's run statistics, and users' fair-share usage (with
-- the epoch it was scaled from; shares and weights stay, as settings do
-- not count as something it holds), so nothing stays behind.
-- Arrays left without runs (their runs deleted through BullMQ's API, which
-- fitq cannot count) go first, with their pool resources.
-- With no run left no id or order position is in use, so the next run
-- staged may take seq 1 again.
local function forgetIfEmpty(base)
  if redis.call("EXISTS", KEY.ids(base)) == 0 then
    local arrays = tryCall("HGETALL", KEY.arrays(base)) or {}
    for i = 1, #arrays, 2 do dropArray(base, arrays[i]) end
  end
  if redis.call("EXISTS", KEY.ids(base), KEY.workers(base), KEY.poolCapacity(base), KEY.settings(base)) > 0 then return end
  if queuePaused(base) then return end
  local used = redis.call("HGETALL", KEY.poolUsed(base))
  for i = 2, #used, 2 do
    if used[i] ~= "0" then return end
  end
  redis.call("DEL", KEY.seq(base), KEY.poolUsed(base), KEY.reconcile(base), KEY.batches(base), KEY.stats(base), KEY.fairUsage(base))
  tryCall("HDEL", KEY.fairShare(base), "epoch")
  forgetQueue(base)
end
