-- @include amounts/compareAmounts
-- @include devices/placeDevices
-- @include policy/placeInWalk
-- @include policy/poolHeldFor
-- @include amounts/subtractAmounts

-- Why a candidate cannot start in this walk, every reason that applies:
-- `short` (resources it needs beyond what is free: {name, need, free}),
-- `held` (what the walk's head needs of them, by amount: {name, headNeed,
-- free}), `devices` (its devices are not free now), `heldDevices` (the head
-- keeps the devices: "pinned", "unplaceable" or "eaten"), `poolShort` and
-- `poolHeld` ({name, need or the holder's need, free}), `poolHolder` and
-- `poolHolderWorker` (the run holding the pool share, and its worker).
local function whyNotNow(walk, candidate)
  local view = walk.view
  local why = {short = {}, held = {}, poolShort = {}, poolHeld = {}}
  for _, item in ipairs(candidate.own) do
    local name, need = item[1], item[2]
    local free = view.free[name]
    if compareAmounts(need, free) > 0 then why.short[#why.short + 1] = {name, need, free} end
    local headNeed = walk.held and walk.held[name]
    if headNeed and compareAmounts(need, subtractAmounts(free, headNeed)) > 0 then
      why.held[#why.held + 1] = {name, headNeed, free}
    end
  end
  local poolHeld, holder, holderWorker = poolHeldFor(walk, candidate)
  for _, item in ipairs(candidate.pooled) do
    local name, need = item[1], item[2]
    local free = view.pool.free[name]
    if compareAmounts(need, free) > 0 then
      why.poolShort[#why.poolShort + 1] = {name, need, free}
    elseif poolHeld[name] and compareAmounts(need, subtractAmounts(free, poolHeld[name])) > 0 then
      why.poolHeld[#why.poolHeld + 1] = {name, poolHeld[name], free}
      why.poolHolder, why.poolHolderWorker = holder, holderWorker
    end
  end
  if placeDevices(view.devices, candidate.own, candidate.pinned, {}) == nil then
    why.devices = true
  elseif placeInWalk(walk, candidate) == nil then
    if walk.headDevices == nil then
      why.heldDevices = "pinned"
    elseif walk.headDevices.placed == nil then
      why.heldDevices = "unplaceable"
    else
      why.heldDevices = "eaten"
    end
  end
  return why
end
