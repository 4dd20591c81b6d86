-- A user's entry in `fair-usage` ("<scaled>,<at>,<rate>", as accrueUsage
-- writes it): their usage scaled to the epoch (see scaledUsage) as of `at`
-- (server ms), and the weighted rate their running runs add to it per
-- second since. nil for none, or for an entry written by hand.
local function readFairUsage(text)
  local scaled, at, rate = string.match(text or "", "^([^,]+),([^,]+),([^,]+)$")
  scaled, at, rate = tonumber(scaled), tonumber(at), tonumber(rate)
  if not (scaled and at and rate) then return nil end
  return {scaled = scaled, at = at, rate = rate}
end
