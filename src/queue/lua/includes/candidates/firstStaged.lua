-- @include candidates/checkStaged
-- @include candidates/noteDrop
-- @include namespace/tryCall

-- Entries of a staged index looked at past its first, at most, per claim.
local LOOK_AHEAD = 100

-- The first run of a shape's staged index that is staged and of that shape
-- (id and score), or nil. The entries before it are dropped (noted in
-- view.drops, see checkStaged); a shape whose index holds no sorted set
-- (written by hand) leaves its group `g` (candidateStream), and one left
-- without staged runs is indexed again (indexShape). When no more may be
-- dropped in this call before the first run is found, it returns nil and
-- the score below which none of the shape's runs lies. The runs behind the
-- first demand the same, so they fit no sooner, and being newer they are
-- never held while it waits. A run whose job this worker still holds a
-- claim on (a job deleted from under that claim, staged again under the
-- same id) is left to other workers until the old claim has ended.
local function firstStaged(view, shape, g)
  local stagedKey = KEY.staged(view.base, shape)
  -- The first entry is nearly always a staged run: it is read alone, the
  -- ones behind it only when it goes.
  local from, to, last = 0, 0, -math.huge
  while from <= LOOK_AHEAD do
    local entries = tryCall("ZRANGE", stagedKey, from, to, "WITHSCORES")
    if not entries then
      noteDrop(view.drops, {kind = "shape", key = g.groupKey, fitKey = g.fitted and g.key, group = g.group, member = shape,
        why = "its index holds no sorted set"})
      return nil
    end
    for i = 1, #entries, 2 do
      local id = entries[i]
      local drop = checkStaged(view.base, stagedKey, shape, id)
      -- (Runs behind one of an open batch wait for its commit.)
      if drop and drop.kind == "open" then return nil end
      if not drop then
        if redis.call("HEXISTS", view.reservedKey, id) == 1 then return nil end
        return id, tonumber(entries[i + 1]) or -math.huge
      end
      if not noteDrop(view.drops, drop) then return nil, nil, tonumber(entries[i + 1]) or -math.huge end
      last = tonumber(entries[i + 1]) or -math.huge
    end
    if #entries / 2 < to - from + 1 then
      -- Every entry it holds goes: the shape leaves its group.
      noteDrop(view.drops, {kind = "reindex", member = shape})
      return nil
    end
    from, to = to + 1, LOOK_AHEAD
  end
  return nil, nil, last
end
