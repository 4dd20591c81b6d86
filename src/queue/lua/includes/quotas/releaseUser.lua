-- @include amounts/adjustAmounts
-- @include amounts/parseResourceList
-- @include fairshare/accrueUsage
-- @include quotas/isUserOwner
-- @include quotas/tidyUsage
-- @include quotas/countOpenRun

-- Gives back what chargeRun charged a run's user and project (a line
-- "<owner>|<resources>" each; nil or "" for nothing); `gone`: the run's job
-- was deleted under it (BullMQ's obliterate with force), so it no longer
-- counts as not ended either; a user's fair-share usage counts what it
-- held until now (fairshare/accrueUsage). Returns whether runs may now
-- start that could not: an owner has a quota (theirs, or a user the
-- default).
local function releaseUser(base, charged, gone)
  local quota = false
  for owner, resources in string.gmatch(charged or "", "([^|\n]+)|([^\n]*)") do
    local list = {}
    for _, item in ipairs(parseResourceList(resources)) do list[#list + 1] = {"res:" .. item[1], item[2]} end
    local usage = KEY.userUsage(base, owner)
    if redis.call("HINCRBY", usage, "runs", -1) < 0 then redis.call("HSET", usage, "runs", 0) end
    adjustAmounts(usage, list, -1)
    local isUser = isUserOwner(owner)
    if isUser then accrueUsage(base, owner) end
    tidyUsage(usage)
    if gone then countOpenRun(base, owner, -1) end
    local quotaKeys = isUser and {KEY.quota(base, owner), KEY.quota(base, ".default")} or {KEY.quota(base, owner)}
    quota = quota or redis.call("EXISTS", unpack(quotaKeys)) > 0
  end
  return quota
end
