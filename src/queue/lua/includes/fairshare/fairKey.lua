-- @include fairshare/fairRank
-- @include bullmq/priorityBand

-- Where a staged run of `user` with this score (bullmq/orderScore:
-- priority, then staging order) comes in a claim's order: with fair share
-- off, or no usage yet, the score itself; with it on, a string that sorts
-- by priority, then by its user's place in the fair order (fairRank), then
-- by staging order, so among runs of equal priority the user who needs it
-- most goes first. Keys of one order are compared with each other only
-- (math.huge and -math.huge stay after and before every key).
local function fairKey(order, score, user)
  if not order.on then return score end
  if score == math.huge then return "~" end
  if score == -math.huge or score ~= score then return "" end
  local band, seq = priorityBand(score)
  band = math.max(math.min(band, 9999999), 0)
  return string.format("%07d%06d%010d", band, user and fairRank(order, user) or 0, seq)
end
