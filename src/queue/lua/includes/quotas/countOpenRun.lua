-- @include quotas/tidyUsage

-- One more (delta 1) or one fewer (-1) run of `user` not ended (`open` in
-- usage:<user>, which a `staged` quota bounds); never below 0 (runs counted
-- by no one, staged by an older fitq, are not taken off).
local function countOpenRun(base, user, delta)
  local usage = KEY.userUsage(base, user)
  if redis.call("HINCRBY", usage, "open", delta) <= 0 then
    redis.call("HSET", usage, "open", 0)
    tidyUsage(usage)
  end
end
