-- @include amounts/adjustAmounts
-- @include amounts/formatResourceList
-- @include arrays/arrayOfLimit
-- @include fairshare/accrueUsage

-- Counts a run that starts against its user (the user its shape names,
-- shape.user; nil: staged by an older fitq, nothing counted): one more
-- running run, and its demand (`demand`, the shape's, arrays' limits left
-- out) reserved, in `usage:<user>`, whether the user has a quota or not,
-- so a quota set later holds at once; and its fair-share usage accrues
-- at the higher rate from `startedAt` (fairshare/accrueUsage: a claim
-- taken back after a failover counts from when the run really started).
-- Returns what was charged as
-- "<user>|<resources>" (kept with the claim, given back by releaseUser),
-- or "" for nothing.
local function chargeUser(base, user, demand, startedAt)
  if not user then return "" end
  local charged = {}
  for _, item in ipairs(demand) do
    if not arrayOfLimit(item[1]) then charged[#charged + 1] = {"res:" .. item[1], item[2]} end
  end
  local usage = KEY.userUsage(base, user)
  redis.call("HINCRBY", usage, "runs", 1)
  adjustAmounts(usage, charged, 1)
  accrueUsage(base, user, startedAt)
  local names = {}
  for _, item in ipairs(charged) do names[#names + 1] = {string.sub(item[1], 5), item[2]} end
  return user .. "|" .. formatResourceList(names)
end
