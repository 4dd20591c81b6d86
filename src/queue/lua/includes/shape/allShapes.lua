-- @include shape/groupNames
-- @include namespace/tryCall
-- @include shape/parseShape

-- Every shape of the group index (`groups`, then each `group:<names>`),
-- passing over what fitq never writes there: the fields of `groups` that
-- are no group, group keys that hold no sorted set, members that are no shape.
local function allShapes(base)
  local shapes = {}
  local groups = redis.call("HGETALL", KEY.groups(base))
  for i = 1, #groups, 2 do
    if groupNames(groups[i]) then
      for _, shape in ipairs(tryCall("ZRANGE", KEY.group(base, groups[i]), 0, -1) or {}) do
        if parseShape(shape) then shapes[#shapes + 1] = shape end
      end
    end
  end
  return shapes
end
