-- @include shape/parseShape

-- A claim's own change to the shape of the run it started (indexShape's
-- `version`, `was` and `score`): the claiming class's fit index of the
-- group takes it at once (the shape's new score, or the shape gone), and
-- records the group's new version, when it had caught up with the group
-- just before (`was` is the version it walked: nothing else changed the
-- group meanwhile). The next claim then has nothing to catch up with.
local function keepFitIndex(base, stream, shape, version, was, score)
  local parsed = parseShape(shape)
  if not parsed or not version then return end
  for _, g in ipairs(stream.groups) do
    if g.group == parsed.group then
      if g.fitted and was == g.version then
        if score then redis.call("ZADD", g.key, score, shape) else redis.call("ZREM", g.key, shape) end
        redis.call("HSET", KEY.fitClass(base, g.classId), g.group, version)
      end
      return
    end
  end
end
