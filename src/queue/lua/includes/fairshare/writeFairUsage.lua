-- @include namespace/tryCall

-- Usage below this, not growing, is forgotten (its field goes).
local FORGOTTEN_USAGE = 1e-6

-- Writes a user's entry in `fair-usage` (see readFairUsage): `scaled` as
-- of `now`, and the rate from then; an entry that no longer counts (under
-- FORGOTTEN_USAGE unscaled, nothing running) goes.
local function writeFairUsage(base, settings, user, scaled, now, rate)
  local usageKey = KEY.fairUsage(base)
  if rate == 0 and scaled * 2 ^ (-(now - settings.epoch) / settings.halfLife) < FORGOTTEN_USAGE then
    tryCall("HDEL", usageKey, user)
  else
    tryCall("HSET", usageKey, user, string.format("%.17g,%.0f,%.17g", scaled, now, rate))
  end
end
