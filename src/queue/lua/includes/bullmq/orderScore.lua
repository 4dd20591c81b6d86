-- @include bullmq/bullPriority

-- A staged run's place in BullMQ's order: its BullMQ priority * 2^32 + its
-- staging sequence. Exact in a double (< 2^53).
local function orderScore(priority, seq)
  return string.format("%.0f", bullPriority(priority) * 4294967296 + tonumber(seq))
end
