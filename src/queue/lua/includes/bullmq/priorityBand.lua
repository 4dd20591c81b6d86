-- Scores of one priority band lie in [band * 2^32, (band + 1) * 2^32)
-- (orderScore).
local BAND = 4294967296

-- A staged run's priority band, from its score (orderScore), and its
-- staging sequence within it: runs of one band differ only in their
-- staging order. math.huge and -math.huge (no score) are bands of their
-- own, after and before all.
local function priorityBand(score)
  if score == math.huge or score == -math.huge then return score, 0 end
  local band = math.floor(score / BAND)
  return band, score - band * BAND
end
