-- @include candidates/candidateStream
-- @include candidates/nextCandidate

-- Every candidate of a worker, oldest first: the first runs of every shape
-- that fits its total capacity (see nextCandidate), and the groups it
-- cannot run (see candidateStream). explainRuns walks them up to each run
-- it explains; a claim takes them one by one instead, and stops early.
local function buildCandidates(view)
  local stream, ignored = candidateStream(view)
  local candidates = {}
  for candidate in function() return nextCandidate(stream) end do candidates[#candidates + 1] = candidate end
  return candidates, ignored
end
