-- @include fairshare/readFairUsage
-- @include fairshare/scaledUsage
-- @include fairshare/writeFairUsage
-- @include namespace/tryCall

-- Moves the epoch usage is scaled from to `now` (and the half-life to
-- `halfLife`, given, which the caller records): every user's usage as of now, unscaled, is their new
-- scaled usage. Done when the scale grows large (2^REBASE_AFTER: a double
-- stays exact to 15 digits, with room to spare) or the half-life changes.
-- Costs one write per user with usage.
local function rebaseUsage(base, settings, now, halfLife)
  local flat = tryCall("HGETALL", KEY.fairUsage(base)) or {}
  local factor = 2 ^ (-(now - settings.epoch) / settings.halfLife)
  local rebased = {epoch = now, halfLife = halfLife or settings.halfLife}
  for i = 1, #flat, 2 do
    local entry = readFairUsage(flat[i + 1])
    if entry then
      writeFairUsage(base, rebased, flat[i], scaledUsage(settings, entry, now) * factor, now, entry.rate)
    else
      tryCall("HDEL", KEY.fairUsage(base), flat[i])
    end
  end
  settings.epoch, settings.halfLife = now, rebased.halfLife
  tryCall("HSET", KEY.fairShare(base), "epoch", string.format("%.0f", now))
end
