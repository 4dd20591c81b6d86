-- Notes an entry a claim drops (claimRun drops them; explainRuns, which
-- only reads, ignores them): {kind, key, member, why, unhold}. kind
-- "entry": a member of a staged index `key` (and its hold, if `unhold`);
-- "shape": a member of `shapes`; "hold": a field of `holds`. Stale entries
-- (their job was removed from BullMQ or moved on, an index left empty) have
-- no `why`; entries written by hand that fitq never writes say what is wrong
-- with them in `why`, and are logged. At most DROP_LIMIT per call, so a
-- flood of them costs a bounded amount per claim; returns false when full
-- (and marks `drops.full`: more may be left for the next call).
local DROP_LIMIT = 100
local function noteDrop(drops, drop)
  if #drops >= DROP_LIMIT then
    drops.full = true
    return false
  end
  drops[#drops + 1] = drop
  return true
end
