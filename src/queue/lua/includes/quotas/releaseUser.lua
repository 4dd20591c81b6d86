-- @include amounts/adjustAmounts
-- @include amounts/parseResourceList
-- @include fairshare/accrueUsage
-- @include quotas/tidyUsage
-- @include quotas/countOpenRun

-- Gives back what chargeUser charged a run's user ("<user>|<resources>";
-- nil or "" for nothing); `gone`: the run's job was deleted under it
-- (BullMQ's obliterate with force), so it no longer counts as not ended
-- either; its fair-share usage counts what it held until now
-- (fairshare/accrueUsage). Returns whether runs may now start that could not: the user has
-- a quota (theirs, or the default).
local function releaseUser(base, charged, gone)
  local user, resources = string.match(charged or "", "^([^|]+)|(.*)$")
  if not user then return false end
  local list = {}
  for _, item in ipairs(parseResourceList(resources)) do list[#list + 1] = {"res:" .. item[1], item[2]} end
  local usage = KEY.userUsage(base, user)
  if redis.call("HINCRBY", usage, "runs", -1) < 0 then redis.call("HSET", usage, "runs", 0) end
  adjustAmounts(usage, list, -1)
  accrueUsage(base, user)
  tidyUsage(usage)
  if gone then countOpenRun(base, user, -1) end
  return redis.call("EXISTS", KEY.quota(base, user), KEY.quota(base, ".default")) > 0
end
