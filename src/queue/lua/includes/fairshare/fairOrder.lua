-- @include fairshare/fairSettings
-- @include fairshare/readFairUsage
-- @include fairshare/scaledUsage
-- @include namespace/tryCall

-- The order fair share puts users in, as of `now`, read once per call:
-- each user's decayed usage divided by their share (`need`: lower goes
-- first; a user with no usage yet needs 0), and those values sorted, from
-- which fairRank gives a user's place; `rate`: what each user's running
-- runs add per second. Costs one read of `fair-share` and
-- one of `fair-usage` (a field per user with usage), whatever is staged.
-- With fair share off, or no usage yet, every user is alike (`on` false):
-- runs go by priority and age alone.
local function fairOrder(base, now)
  local settings = fairSettings(base)
  local order = {base = base, settings = settings, now = now, need = {}, usage = {}, rate = {}, sorted = {}, ranks = {}}
  if not settings.epoch then return order end
  local flat = tryCall("HGETALL", KEY.fairUsage(base)) or {}
  local unscale = 2 ^ (-(now - settings.epoch) / settings.halfLife)
  for i = 1, #flat, 2 do
    local entry = readFairUsage(flat[i + 1])
    if entry then
      local user = flat[i]
      local usage = scaledUsage(settings, entry, now) * unscale
      order.usage[user] = usage
      order.rate[user] = entry.rate
      order.need[user] = usage / (settings.shares[user] or 1)
      order.sorted[#order.sorted + 1] = order.need[user]
    end
  end
  order.on = settings.on and #order.sorted > 0
  -- What a user with no usage needs, ranked too: they come before every user with some.
  order.sorted[#order.sorted + 1] = 0
  table.sort(order.sorted)
  return order
end
