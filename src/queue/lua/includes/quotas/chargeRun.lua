-- @include quotas/chargeOwner
-- @include quotas/quotaOwners

-- Counts a run of a shape (as parseShape gives it) that starts against its
-- user and its project (quotaOwners, chargeOwner), from `startedAt`.
-- Returns what was charged, one "<owner>|<resources>" line each, the user
-- first (kept with the claim as `charged`, given back by releaseUser); ""
-- for nothing (a run staged by an older fitq names no one).
local function chargeRun(base, parsed, startedAt)
  local lines = {}
  for _, owner in ipairs(quotaOwners(parsed)) do lines[#lines + 1] = chargeOwner(base, owner, parsed.demand, startedAt) end
  return table.concat(lines, "\n")
end
