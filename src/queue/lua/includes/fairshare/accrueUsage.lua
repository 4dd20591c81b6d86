-- @include fairshare/fairSettings
-- @include fairshare/readFairUsage
-- @include fairshare/rebaseUsage
-- @include fairshare/scaledUsage
-- @include fairshare/usageRate
-- @include fairshare/writeFairUsage
-- @include namespace/serverNow
-- @include namespace/tryCall

-- Scales grown past 2^REBASE_AFTER are rebased (rebaseUsage).
local REBASE_AFTER = 256

-- Brings a user's fair-share usage up to now, after one of their runs
-- started or ended (quotas/chargeOwner, quotas/releaseUser changed what they
-- hold): what their runs held since the last change counts at the rate
-- then, and what they hold now is the rate from now, or, for a run that
-- started earlier (`since`: a claim taken back after a failover lost it,
-- reclaimRun), from when it started. Counted whether fair share orders the
-- claim or not, so turning it on is fair at once.
local function accrueUsage(base, user, since)
  local now = serverNow()
  local from = math.min(since or now, now)
  local settings = fairSettings(base)
  if not settings.epoch then
    settings.epoch = from
    tryCall("HSET", KEY.fairShare(base), "epoch", string.format("%.0f", from))
  elseif (now - settings.epoch) / settings.halfLife > REBASE_AFTER then
    rebaseUsage(base, settings, now)
  end
  local entry = readFairUsage(tryCall("HGET", KEY.fairUsage(base), user)) or {scaled = 0, at = from, rate = 0}
  local rate = usageRate(base, settings, user)
  if entry.at <= from then
    writeFairUsage(base, settings, user, scaledUsage(settings, entry, from), from, rate)
  else
    -- Its usage changed since the run started: what the run added since then is added to it.
    local added = scaledUsage(settings, {scaled = 0, at = from, rate = rate - entry.rate}, now)
    writeFairUsage(base, settings, user, scaledUsage(settings, entry, now) + added, now, rate)
  end
end
