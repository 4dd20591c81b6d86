-- @include amounts/addAmounts
-- @include amounts/parseAmount
-- @include amounts/parseResourceList
-- @include amounts/compareAmounts
-- @include devices/placeDevices
-- @include devices/shiftDevices

-- Whether the claim's blocked head (`head`, a candidate) would start on
-- this worker if the runs `victims` ({id, claim} each: the worker's record of
-- their claim) gave back what they reserved: of the worker, of the pool and
-- of its GPU devices. Reads only: the view is as it was after.
local function freedFits(view, head, victims)
  local freed, pooled = {}, {}
  for _, victim in ipairs(victims) do
    for _, item in ipairs(parseResourceList(victim.claim.reserved)) do freed[item[1]] = addAmounts(freed[item[1]] or {0, 0}, item[2]) end
    for _, item in ipairs(parseResourceList(victim.claim.pooled)) do pooled[item[1]] = addAmounts(pooled[item[1]] or {0, 0}, item[2]) end
  end
  -- Each demand within what is free plus what they give back.
  for _, part in ipairs({{head.own, view.free, freed}, {head.pooled, view.pool.free, pooled}}) do
    for _, item in ipairs(part[1]) do
      local have = part[2][item[1]] or {0, 0}
      if part[3][item[1]] then have = addAmounts(have, part[3][item[1]]) end
      if compareAmounts(item[2], have) > 0 then return false end
    end
  end
  -- Their devices, given back for the placement only.
  local shifts = {}
  for _, victim in ipairs(victims) do
    local ids = {}
    for id in string.gmatch(victim.claim.devices or "", "[^,]+") do
      if view.devices.shares[id] then ids[#ids + 1] = id end
    end
    if #ids > 0 then
      local share = parseAmount(victim.claim.deviceShare)
      shiftDevices(view.devices, ids, share, 1)
      shifts[#shifts + 1] = {ids, share}
    end
  end
  local placed = placeDevices(view.devices, head.own, head.pinned, {})
  for _, shift in ipairs(shifts) do shiftDevices(view.devices, shift[1], shift[2], -1) end
  return placed ~= nil
end
