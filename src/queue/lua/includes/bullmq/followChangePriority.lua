-- @include bullmq/bullPriority
-- @include bullmq/orderScore
-- @include claims/liveClaim
-- @include lifecycle/runDataText
-- @include namespace/tryCall
-- @include shape/indexShape
-- @include shape/parseShape

-- Reconciling (see reconcileRuns), a staged run in the fit index whose
-- BullMQ priority is not the one its order says (changePriority, which
-- emits no event), or that is missing from prioritized or its staged index,
-- or is in wait: an unsigned run takes the new priority (fitq's priority =
-- 1,000,001 - BullMQ's; BullMQ's 0, "no priority", is fitq's default 0;
-- below -1,000,000 is -1,000,000), its data, opts, score and index entries
-- rewritten; a signed run keeps its signed priority (its BullMQ priority and
-- score are restored). It goes back to prioritized, at its score. A shape
-- or index written by hand is left for the claim to drop, and a running run
-- put back as staged by hand is not staged again.
local function followChangePriority(r, runId)
  local base = r.base
  local prioritizedKey = KEY.queuePrioritized(base)
  local key = KEY.run(base, runId)
  local job = redis.call("HMGET", key, "shape", "score", "priority", "seq", "opts", "worker")
  local shape, score = job[1], tonumber(job[2])
  local stagedKey = KEY.staged(base, shape)
  if not score or not parseShape(shape) or liveClaim(base, runId, job[6]) then return end
  local indexed = tryCall("ZSCORE", stagedKey, runId)
  if indexed == nil then return end
  local bull = math.floor(score / 4294967296)
  local given = tonumber(job[3])
  local inWait = redis.call("LREM", KEY.queueWait(base), 0, runId) > 0
  if given ~= bull then
    local ok, data = pcall(cjson.decode, runDataText(base, runId) or "")
    if ok and type(data) == "table" and data.signature == nil then
      -- Unsigned: the new priority is fitq's too.
      local priority = 0
      if given and given > 0 then priority = math.max(-1000000, PRIORITY_BASE - given) end
      -- (Left out at its default, as the run codec writes it: run-codec.ts.)
      data.priority = priority ~= 0 and priority or nil
      local decoded, opts = pcall(cjson.decode, job[5] or "")
      if not decoded or type(opts) ~= "table" then opts = {} end
      opts.priority = bullPriority(priority)
      score = tonumber(orderScore(priority, job[4]))
      local text = cjson.encode(data)
      redis.call("HSET", key, "priority", bullPriority(priority), "score", string.format("%.0f", score),
        "data", text, "runData", text, "opts", cjson.encode(opts))
      r.act("priority", runId, tostring(priority))
    else
      -- Signed (or unreadable): its priority is part of what was signed.
      redis.call("HSET", key, "priority", bull)
      r.act("priorityKept", runId, tostring(PRIORITY_BASE - bull))
    end
  end
  local scoreText = string.format("%.0f", score)
  if inWait or tonumber(redis.call("ZSCORE", prioritizedKey, runId) or "") ~= score then
    redis.call("ZADD", prioritizedKey, scoreText, runId)
  end
  if tonumber(indexed or "") ~= score then
    redis.call("ZADD", stagedKey, scoreText, runId)
    indexShape(base, shape)
  end
end
