-- @include amounts/adjustAmounts
-- @include amounts/formatResourceList
-- @include arrays/arrayOfLimit
-- @include fairshare/accrueUsage
-- @include quotas/isUserOwner

-- Counts a run that starts against `owner` (its user, or its project:
-- quotaOwners): one more running run, and its demand (`demand`, the
-- shape's, arrays' limits left out) reserved, in `usage:<owner>`, whether
-- the owner has a quota or not, so a quota set later holds at once; and a
-- user's fair-share usage accrues at the higher rate from `startedAt`
-- (fairshare/accrueUsage: a claim taken back after a failover counts from
-- when the run really started). Returns what was charged as
-- "<owner>|<resources>" (chargeRun keeps it with the claim, releaseUser
-- gives it back).
local function chargeOwner(base, owner, demand, startedAt)
  local charged = {}
  for _, item in ipairs(demand) do
    if not arrayOfLimit(item[1]) then charged[#charged + 1] = {"res:" .. item[1], item[2]} end
  end
  local usage = KEY.userUsage(base, owner)
  redis.call("HINCRBY", usage, "runs", 1)
  adjustAmounts(usage, charged, 1)
  -- (A project has no fair share: its runs' users do.)
  if isUserOwner(owner) then accrueUsage(base, owner, startedAt) end
  local names = {}
  for _, item in ipairs(charged) do names[#names + 1] = {string.sub(item[1], 5), item[2]} end
  return owner .. "|" .. formatResourceList(names)
end
