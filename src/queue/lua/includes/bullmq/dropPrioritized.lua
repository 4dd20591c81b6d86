-- @include namespace/tryCall

-- Takes a job out of the staged order (prioritized) only (a key written by
-- hand as another type is left alone).
local function dropPrioritized(base, runId)
  tryCall("ZREM", KEY.queuePrioritized(base), runId)
end
