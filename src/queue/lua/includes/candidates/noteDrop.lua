-- Notes an entry a claim drops (claimRun drops them; explainRuns, which
-- only reads, ignores them): {kind, key, member, why, ...}. kind "entry": a
-- member of the staged index `key` of `shape` (and its hold, if `unhold`);
-- "shape": a member of the group `group`'s zset `key`; "group": a field of
-- `groups`; "hold": a field of `holds`; "reindex": a shape whose index
-- holds no staged run, to leave its group (indexShape); "batch": a run of
-- a batch whose stager died (see checkStaged), removed; "park": a shape of
-- an array at its limit, out of the worker class's fit index `fitKey`
-- (class `class`) until a run of its `arrays` ends (unparkArray). Stale entries
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
