-- @include bullmq/jobStartedAt
-- @include bullmq/priorityBand
-- @include fairshare/usedOfShare

-- Whether a running run of this worker may be preempted for the blocked
-- head (`head`), as its claim record (`claim`) and the fair order
-- (`view.fair`) say: {at = its start, from = when its --preempt-after
-- has passed}, or nil. A run staged --preemptible (its record's `pre`)
-- may be for a head of a higher priority. With `fitq share set --preempt`,
-- a run whose user has used more than their share (beside the head's
-- user) may be too, --preemptible or not, for a head of a higher priority
-- or for a head of the same priority whose user needs less (fairOrder):
-- as a user within their share takes back what another borrowed.
local function victimTerms(base, view, head, headBand, runId, claim)
  local pre, order = claim.pre, view.fair
  local byShare = order.on and order.settings.preempt
  if type(pre) ~= "table" and not byShare then return nil end
  local user = byShare and type(claim.charged) == "string" and string.match(claim.charged, "^([^|]+)|") or nil
  local band, at, after
  if type(pre) == "table" then
    band, at, after = tonumber(pre.band), tonumber(pre.at), tonumber(pre.after) or 0
  else
    band = (priorityBand(tonumber(redis.call("HGET", KEY.run(base, runId), "score") or "") or -math.huge))
    at, after = jobStartedAt(base, runId), 0
  end
  if not band or not at then return nil end
  local lower = band > headBand
  local overShare = byShare and user ~= nil and head.user ~= nil and user ~= head.user and usedOfShare(order, user, {head.user}) > 1
  local fairer = overShare and band == headBand and (order.need[head.user] or 0) < (order.need[user] or 0)
  if type(pre) == "table" then
    if not (lower or fairer) then return nil end
  elseif not (overShare and (lower or fairer)) then
    return nil
  end
  return {at = at, from = at + after}
end
