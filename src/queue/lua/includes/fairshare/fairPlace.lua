-- @include fairshare/fairRank
-- @include bullmq/priorityBand

-- Where a staged run of `user` with this score comes among the runs of its
-- own priority band, as a number (its user's fairRank, then its staging
-- order): what fairKey says within one band, without making its string,
-- so a claim sorts a band by it. Scores that are no band (±math.huge, NaN:
-- written by hand) come after every run.
local function fairPlace(order, score, user)
  if score ~= score or score == math.huge or score == -math.huge then return math.huge end
  local _, seq = priorityBand(score)
  return (user and fairRank(order, user) or 0) * 4294967296 + seq
end
