-- @include amounts/compareAmounts
-- @include policy/shadowTime
-- @include amounts/subtractAmounts

-- Whether the rest of a group (its next shape's key `key`, fairKey) can be
-- passed over in this walk: none of its runs can start now (of one of its
-- resources nothing is left, less what the blocked head holds: every run of
-- the group needs some), nor become the blocked head (the walk has one, or
-- an older run is held elsewhere). When the head's shadow time is known
-- (shadowTime) and still to come, so a run could end before it, what the
-- head holds may go to such runs: only what is free counts.
local function groupBlocked(walk, names, key)
  local view = walk.view
  if walk.head == nil and not (view.olderHold and key >= view.olderHold.key) then return false end
  local shadow = walk.head and not walk.fifo and shadowTime(walk)
  local byTime = shadow and shadow > view.clock
  for _, name in ipairs(names) do
    local left
    if view.pool.capacity[name] then
      left = view.pool.free[name]
    else
      left = view.free[name] or {0, 0}
      if walk.held and walk.held[name] and not byTime then left = subtractAmounts(left, walk.held[name]) end
    end
    if compareAmounts(left, {0, 0}) <= 0 then return true end
  end
  return false
end
