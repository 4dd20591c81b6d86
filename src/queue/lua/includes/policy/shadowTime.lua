-- @include amounts/addAmounts
-- @include candidates/fitsWithin
-- @include amounts/parseAmount
-- @include amounts/parseResourceList
-- @include devices/placeDevices
-- @include devices/shiftDevices

-- When the walk's blocked head could start on this worker at the earliest
-- (its "shadow time", epoch ms, server clock), from the deadlines of the
-- runs the worker runs (their claims' start plus time limit, in
-- worker:<name>:reserved): the first deadline by which enough of them have
-- ended for the head to fit what is free then (by amount, and on the
-- devices). nil when it is not known: a running run has no time limit, or
-- the head would not fit even once they all have ended (what it lacks is
-- held elsewhere, e.g. the pool). Read once per walk.
local function shadowTime(walk)
  if walk.shadow ~= nil then return walk.shadow or nil end
  walk.shadow = false
  local view, head = walk.view, walk.head
  local flat = redis.call("HGETALL", view.reservedKey)
  local ending = {}
  for i = 2, #flat, 2 do
    local ok, claim = pcall(cjson.decode, flat[i])
    local deadline = ok and type(claim) == "table" and tonumber(claim.deadline)
    if not deadline then return nil end
    ending[#ending + 1] = {deadline = deadline, reserved = parseResourceList(claim.reserved),
      devices = claim.devices or "", share = claim.deviceShare or ""}
  end
  table.sort(ending, function(a, b) return a.deadline < b.deadline end)
  local free = {}
  for name, amount in pairs(view.free) do free[name] = amount end
  local shares = {}
  for id, amount in pairs(view.devices.shares) do shares[id] = amount end
  local devices = {shares = shares, ids = view.devices.ids, spread = view.devices.spread}
  for _, run in ipairs(ending) do
    for _, item in ipairs(run.reserved) do free[item[1]] = addAmounts(free[item[1]] or {0, 0}, item[2]) end
    if run.devices ~= "" and run.share ~= "" then
      local ids = {}
      for id in string.gmatch(run.devices, "[^,]+") do if shares[id] then ids[#ids + 1] = id end end
      shiftDevices(devices, ids, parseAmount(run.share), 1)
    end
    if fitsWithin(head.own, free) and placeDevices(devices, head.own, head.pinned, {}) then
      walk.shadow = math.max(run.deadline, view.clock)
      return walk.shadow
    end
  end
  return nil
end
