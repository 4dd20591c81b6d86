-- @include classes/parkedField
-- @include shape/parseShape
-- @include namespace/tryCall

-- A run of an array ended (or its limit changed): the shapes of the array
-- that claims took out of their class's fit index while the array was at
-- its limit (`array-parked:<id>`, members `<class>|<shape>`; see
-- candidates/nextCandidate.lua) go back in, with their score in their group
-- now, if they are still in it and the index is there (else the index
-- catches up from the group's log, or is built again, without them
-- missing), and count no more among their class's parked shapes.
-- Cost: the array's shapes times the classes that met them.
local function unparkArray(base, array)
  local parkedKey = KEY.arrayParked(base, array)
  local parked = tryCall("SMEMBERS", parkedKey)
  if not parked or #parked == 0 then return end
  for _, member in ipairs(parked) do
    local class, shape = string.match(member, "^(%x+)|(.+)$")
    local parsed = shape and parseShape(shape)
    if parsed then
      local score = tryCall("ZSCORE", KEY.group(base, parsed.group), shape)
      local fitKey = KEY.fitGroup(base, class .. "|" .. parsed.group)
      if score and tryCall("ZSCORE", fitKey, "") then redis.call("ZADD", fitKey, score, shape) end
      local classKey = KEY.fitClass(base, class)
      if redis.call("EXISTS", classKey) == 1 and (tryCall("HINCRBY", classKey, parkedField(), -1) or 0) <= 0 then
        tryCall("HDEL", classKey, parkedField())
      end
    end
  end
  redis.call("DEL", parkedKey)
end
