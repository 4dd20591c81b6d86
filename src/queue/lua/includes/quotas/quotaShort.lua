-- @include amounts/addAmounts
-- @include amounts/compareAmounts
-- @include amounts/formatAmount
-- @include amounts/parseAmount
-- @include arrays/arrayOfLimit
-- @include quotas/quotaOf

-- Whether a run demanding `demand` (a shape's, {name, amount} each) would
-- take `owner` (a user, or a project: quotaOwners) past their quota
-- (quotaOf) if it started now: nil when it would not (or the owner has
-- none), else what it lacks, the first found: {name = "running" or a
-- resource, need, used, limit} (amounts as formatAmount writes them). See
-- runQuotaShort, which asks it for each owner of a run.
local function quotaShort(base, cache, owner, demand)
  local quota = quotaOf(base, cache, owner)
  if not quota then return nil end
  local usage = KEY.userUsage(base, owner)
  if quota.running then
    local runs = tonumber(redis.call("HGET", usage, "runs") or "0") or 0
    if runs + 1 > quota.running then
      return {name = "running", need = "1", used = tostring(math.max(runs, 0)), limit = tostring(quota.running)}
    end
  end
  for _, item in ipairs(demand) do
    local limit = quota.resources[item[1]]
    if limit and not arrayOfLimit(item[1]) then
      local used = parseAmount(redis.call("HGET", usage, "res:" .. item[1]) or "0")
      if compareAmounts(addAmounts(used, item[2]), limit) > 0 then
        return {name = item[1], need = formatAmount(item[2]), used = formatAmount(used), limit = formatAmount(limit)}
      end
    end
  end
  return nil
end
