-- A user's decayed usage, lazily: usage u(t) halves every half-life h, so
-- it is kept scaled to the namespace's epoch, s = u(t) * 2^((t - epoch) / h),
-- which only grows, and never needs decaying: comparing users' s compares
-- their u at any one time. A run holding weighted `rate` per second from
-- `at` to `now` adds rate * (h / ln 2) * (2^((now - epoch) / h) - 2^((at -
-- epoch) / h)) to s (the integral of rate * 2^((t - epoch) / h)), with
-- 2^x - 1 for small x summed as a series, not subtracted (exact to the
-- last digits for runs of seconds under a half-life of days). Returns s as
-- of `now`; u(now) is s * 2^(-(now - epoch) / h).
local function scaledUsage(settings, entry, now)
  if entry.rate == 0 or now <= entry.at then return entry.scaled end
  local h = settings.halfLife
  local x = (now - entry.at) / h * math.log(2)
  local grownBy = x < 1e-3 and x * (1 + x / 2 * (1 + x / 3 * (1 + x / 4))) or math.exp(x) - 1
  return entry.scaled + entry.rate * (h / 1000) / math.log(2) * 2 ^ ((entry.at - settings.epoch) / h) * grownBy
end
