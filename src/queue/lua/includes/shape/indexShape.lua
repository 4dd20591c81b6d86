-- @include shape/parseShape
-- @include namespace/tryCall

-- Brings the group index in step with a shape's staged index, after runs
-- came or went: the shape's score in its group (`group:<names>`) is its
-- first run's; a shape left without runs leaves its group, a group left
-- without shapes leaves `groups`. The group's version in `groups` (the
-- server's clock in microseconds) changes, for the workers that report its
-- runs as ignored. (A group key written by hand as another type is left as
-- it is.) A shape fitq never writes (parseShape) is in no group: there is
-- nothing to bring in step.
local function indexShape(base, shape)
  local parsed = parseShape(shape)
  if not parsed then return end
  local group = parsed.group
  local groupKey = KEY.group(base, group)
  local first = tryCall("ZRANGE", KEY.staged(base, shape), 0, 0, "WITHSCORES") or {}
  if #first == 0 then
    tryCall("ZREM", groupKey, shape)
    if (tryCall("ZCARD", groupKey) or 0) == 0 then
      redis.call("HDEL", KEY.groups(base), group)
      return
    end
  else
    tryCall("ZADD", groupKey, first[2], shape)
  end
  local time = redis.call("TIME")
  redis.call("HSET", KEY.groups(base), group, time[1] .. string.format("%06d", tonumber(time[2])))
end
