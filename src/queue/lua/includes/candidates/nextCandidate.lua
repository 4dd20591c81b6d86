-- @include shape/demandNames
-- @include candidates/firstStaged
-- @include candidates/fitsTotal
-- @include policy/groupBlocked
-- @include candidates/noteDrop
-- @include candidates/shapeDemand
-- @include shape/parseShape
-- @include candidates/throttled
-- @include quotas/runQuotaShort
-- @include candidates/readGroupEntries
-- @include fairshare/fairKey

-- The next candidate of a stream (candidateStream), first in the claim's
-- order (lowest `key`, fairshare/fairKey: by priority, then, with fair
-- share on, its user's place in the fair order, then age): the first run
-- of a shape that fits the worker's total capacity, as shapeDemand gives
-- it with its `id`, `score`, `key` and `user`; nil when there is none. Shapes are
-- taken in the order of their keys in their groups (their first runs'),
-- merged across groups, and looked into only when their turn comes,
-- so a claim that starts the oldest run it can looks at little more than
-- that run's shape. With a `walk` (a claim's), the rest of a group none of
-- whose runs can start now nor be held is passed over (groupBlocked), once
-- a candidate was seen. What is dropped on the way (see firstStaged; group
-- members that are no shape of the group, groups that are no sorted set or
-- empty) is noted in view.drops; a shape whose first run is not found for
-- all there was to drop ends the stream at the entries it has not looked at
-- (one of its runs may be older, and runs start in order).
local function nextCandidate(stream, walk)
  local view = stream.view
  while true do
    local best, bestKey
    for _, g in ipairs(stream.groups) do
      if not g.done and g.pos > #g.entries then
        if g.exhausted then
          g.done = true
        else
          local first = g.offset == 0
          if not readGroupEntries(g, view.fair) then
            if not g.fitted then noteDrop(view.drops, {kind = "group", member = g.group, why = "its key holds no sorted set"}) end
            g.done = true
          elseif #g.entries == 0 then
            if first and not g.fitted then noteDrop(view.drops, {kind = "group", member = g.group}) end
            g.done = true
          end
        end
      end
      -- (A fit index ends with "": see catchUpClass.)
      if not g.done and g.fitted and g.entries[g.pos] == "" then g.done = true end
      if not g.done then
        local key = g.keys and g.keys[g.pos] or tonumber(g.entries[g.pos + 1]) or -math.huge
        if key >= stream.horizon or (walk and stream.seen and groupBlocked(walk, g.names, key)) then
          g.done = true
        elseif not best or key < bestKey then
          best, bestKey = g, key
        end
      end
    end
    -- A candidate goes once no shape left can come before it.
    local first = stream.pending[1]
    if first and (not best or first.key <= bestKey) then
      table.remove(stream.pending, 1)
      stream.seen = true
      return first
    end
    if not best then return nil end
    local shape = best.entries[best.pos]
    best.pos = best.pos + 2
    local parsed = parseShape(shape)
    if not parsed or parsed.group ~= best.group then
      local drop = {kind = "shape", key = best.groupKey, fitKey = best.fitted and best.key, group = best.group, member = shape}
      if parsed and best.group == demandNames(parsed) then
        -- Indexed by an older fitq, whose groups held arrays' limits: it goes to its own group
        -- (stream.moved: the claim says its runs wait, and claims again).
        noteDrop(view.drops, {kind = "reindex", member = shape})
        stream.moved = true
      else
        drop.why = "not a shape of its group"
      end
      noteDrop(view.drops, drop)
    elseif #parsed.arrays > 0 and throttled(view.pool, parsed.arrays) then
      -- Its array is at its limit: passed over (its runs start once one of the array's ends), and
      -- out of the claiming worker's fit index until then (unparkArray).
      stream.throttled = true
      if walk and best.fitted then
        noteDrop(view.drops, {kind = "park", fitKey = best.key, class = best.classId, member = shape, arrays = parsed.arrays})
      end
    elseif runQuotaShort(view.base, view.quotas, parsed) then
      -- Its user (or project) is at their quota: passed over, as an array at its limit (its runs start once one of the user's ends).
      stream.throttled = true
    else
      local wanted = shapeDemand(view, shape, parsed)
      if fitsTotal(view, wanted) then
        local id, score, unseen = firstStaged(view, shape, best)
        unseen = unseen and fairKey(view.fair, unseen, parsed.user)
        if unseen and unseen < stream.horizon then
          stream.horizon = unseen
          while #stream.pending > 0 and stream.pending[#stream.pending].key >= unseen do
            stream.pending[#stream.pending] = nil
          end
        end
        local key = id and fairKey(view.fair, score, parsed.user)
        if id and key < stream.horizon then
          wanted.id, wanted.score, wanted.key, wanted.user = id, score, key, parsed.user
          local at = #stream.pending + 1
          while at > 1 and stream.pending[at - 1].key > key do at = at - 1 end
          table.insert(stream.pending, at, wanted)
        end
      end
    end
  end
end
