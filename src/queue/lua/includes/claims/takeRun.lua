-- @include bullmq/activateJob
-- @include amounts/adjustAmounts
-- @include claims/encodeClaim
-- @include amounts/formatAmount
-- @include amounts/formatResourceList
-- @include classes/keepFitIndex
-- @include stats/countRunStart
-- @include namespace/publish
-- @include amounts/subtractAmounts
-- @include shape/unindex
-- @include shape/parseShape
-- @include quotas/chargeRun
-- @include preemption/preemptTerms
-- @include bullmq/priorityBand

-- Starts a staged run for a worker: what claimRun does with the run it
-- chose, and reclaimRun with a claim a failover lost. Its job goes active
-- under a lock held with the worker's lease (at `startedAt`), it leaves the
-- fit index and any hold, and what it takes is reserved of the worker
-- (`claim.own`), of the pool (`claim.pooled`) and of the worker's GPU
-- devices (`claim.placed`, `claim.share` of each, whose free shares
-- `claim.shares` holds), and counted against the user who staged it and
-- its project (chargeRun, `charged`); the run and the worker's worker:<name>:reserved
-- record the claim; a preemptible run's record says when it started, its
-- priority band and its `--preempt-after` (preemption/). `claim.epoch`: the epoch of the claim taken back (nil:
-- the run's next). `stream`: the claim's candidate stream, whose fit index
-- takes the change at once (nil: the index catches up from the group log).
-- `keys`: the worker's keys (worker, free, devices, reserved, runs), holds
-- and pool:used. Returns the claim's epoch.
local function takeRun(base, keys, name, token, claim, startedAt, stream)
  local runKey = KEY.run(base, claim.id)
  activateJob(base, claim.id, name, token, redis.call("HGET", keys.worker, "leaseMs"), startedAt)
  countRunStart(base, claim.id, startedAt)
  local heldBy = redis.call("HGET", keys.holds, claim.id)
  if heldBy and heldBy ~= name then publish(base, {type = "holds", worker = name}) end
  local version, was, score = unindex(base, claim.id, claim.shape)
  if stream then keepFitIndex(base, stream, claim.shape, version, was, score) end
  adjustAmounts(keys.free, claim.own, -1)
  adjustAmounts(keys.poolUsed, claim.pooled, 1)
  local epoch = claim.epoch
  if epoch then
    redis.call("HSET", runKey, "epoch", epoch)
  else
    epoch = redis.call("HINCRBY", runKey, "epoch", 1)
  end
  local reserved, pooledText = formatResourceList(claim.own), formatResourceList(claim.pooled)
  redis.call("HSET", runKey, "status", "running", "worker", name, "reserved", reserved, "pooled", pooledText)
  local placedText, shareText = "", ""
  if #claim.placed > 0 then
    for _, id in ipairs(claim.placed) do
      redis.call("HSET", keys.devices, id, formatAmount(subtractAmounts(claim.shares[id], claim.share)))
    end
    placedText, shareText = table.concat(claim.placed, ","), formatAmount(claim.share)
    redis.call("HSET", runKey, "devices", placedText, "deviceShare", shareText)
  else
    redis.call("HDEL", runKey, "devices", "deviceShare")
  end
  if claim.runLimit then
    redis.call("HSET", runKey, "runLimit", claim.runLimit, "deadline", claim.deadline)
  else
    redis.call("HDEL", runKey, "runLimit", "deadline")
  end
  -- Its user's usage (quotas/): what a quota bounds.
  local parsed = parseShape(claim.shape)
  local charged = parsed and chargeRun(base, parsed, startedAt) or ""
  if charged ~= "" then redis.call("HSET", runKey, "charged", charged) else redis.call("HDEL", runKey, "charged") end
  local terms, pre = preemptTerms(base, claim.id), nil
  local order = terms and tonumber(redis.call("HGET", runKey, "score") or "")
  if order then pre = {at = startedAt, band = (priorityBand(order)), after = terms.after} end
  redis.call("HSET", keys.reserved, claim.id, encodeClaim(epoch, reserved, pooledText, placedText, shareText, claim.deadline, charged, pre))
  redis.call("HDEL", runKey, "reason", "preempting")
  redis.call("SADD", keys.runs, claim.id)
  redis.call("HINCRBY", keys.worker, "running", 1)
  return epoch
end
