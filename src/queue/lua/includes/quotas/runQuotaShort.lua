-- @include quotas/quotaOwners
-- @include quotas/quotaShort

-- Whether a run of a shape (as parseShape gives it) would take its user or
-- its project past their quota if it started now (quotaShort): nil when
-- neither, else what it lacks, the first found, with `owner` (the user, or
-- `project=<name>`). Checked by the claim on every candidate
-- (nextCandidate), by reclaimRun, and by explainRuns to say so.
local function runQuotaShort(base, cache, parsed)
  for _, owner in ipairs(quotaOwners(parsed)) do
    local short = quotaShort(base, cache, owner, parsed.demand)
    if short then
      short.owner = owner
      return short
    end
  end
  return nil
end
