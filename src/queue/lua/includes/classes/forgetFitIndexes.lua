-- @include namespace/tryCall

-- A group left without shapes: the fit index every class kept of it goes,
-- and the group from each class's record (`fit-class:<class>`, which goes
-- once it records nothing), so a namespace without staged runs keeps none.
local function forgetFitIndexes(base, group)
  local classesKey = KEY.groupClasses(base, group)
  for _, class in ipairs(tryCall("SMEMBERS", classesKey) or {}) do
    redis.call("DEL", KEY.fitGroup(base, class .. "|" .. group))
    tryCall("HDEL", KEY.fitClass(base, class), group)
  end
  redis.call("DEL", classesKey)
end
