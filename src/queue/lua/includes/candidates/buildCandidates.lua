-- @include candidates/candidateStream
-- @include candidates/nextCandidate
-- @include classes/useFitIndexes
-- @include classes/workerClass

-- Every candidate of a worker, in the claim's order, up to the key `upTo`
-- (fairshare/fairKey): the
-- first runs of every shape that fits its total capacity (see
-- nextCandidate; taken from its class's fit indexes where they have caught
-- up), and the groups it cannot run (see candidateStream). explainRuns
-- walks them up to each run it explains (no candidate newer than the
-- newest of those changes a verdict); a claim takes them one by one
-- instead, and stops early.
local function buildCandidates(view, upTo)
  local stream, ignored = candidateStream(view)
  useFitIndexes(view.base, workerClass(view), stream)
  local candidates = {}
  for candidate in function() return nextCandidate(stream) end do
    if candidate.key > upTo then break end
    candidates[#candidates + 1] = candidate
  end
  return candidates, ignored
end
