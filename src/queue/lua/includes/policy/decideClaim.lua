-- @include policy/holdIfFirst
-- @include policy/newWalk
-- @include candidates/nextCandidate
-- @include policy/startsNow

-- What a claim by this worker would do now: the candidate it starts
-- (`chosen`, with the devices it gets, `placed`, and their `share`) if any,
-- and the blocked run it holds (backfill) or waits for (fifo), `head`. It
-- takes the candidates of `stream` (candidateStream) in order, only as far
-- as it needs.
local function decideClaim(view, stream, policy)
  local walk = newWalk(view, policy)
  while true do
    local candidate = nextCandidate(stream, walk)
    if candidate == nil then break end
    local placed, share = startsNow(walk, candidate)
    if placed then return {chosen = candidate, placed = placed, share = share, head = walk.head} end
    if walk.fifo then return {head = candidate} end
    holdIfFirst(walk, candidate)
  end
  return {head = walk.head}
end
