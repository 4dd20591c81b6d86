-- @include classes/forgetFitIndexes
-- @include shape/nextGroupVersion
-- @include shape/parseShape
-- @include namespace/tryCall

-- Brings the group index in step with a shape's staged index, after runs
-- came or went: the shape's score in its group (`group:<names>`) is its
-- first run's; a shape left without runs leaves its group, a group left
-- without shapes leaves `groups` (its log and the fit indexes of it go). The group's version in
-- `groups` changes (nextGroupVersion), for the workers that report its runs
-- as ignored, and the shape is logged with it in `group-log:<names>`, from
-- which the fit index of each worker class catches up
-- (includes/classes/catchUpClass.lua). A group's log begins with the
-- member "" (score 0) when the group begins: a log without it began before
-- fitq kept logs, and is not complete. (A group key written by hand as
-- another type is left as it is.) A shape fitq never writes (parseShape)
-- is in no group: there is nothing to bring in step. Returns the group's
-- version now (nil once it is gone), the one before, and the shape's score
-- in it (nil once it left). `group-users:<names>` counts the group's shapes
-- by user, so a claim knows whether fair share has users to order in it
-- (candidates/readGroupEntries).
local function indexShape(base, shape)
  local parsed = parseShape(shape)
  if not parsed then return end
  local group = parsed.group
  local groupKey, logKey = KEY.group(base, group), KEY.groupLog(base, group)
  local first = tryCall("ZRANGE", KEY.staged(base, shape), 0, 0, "WITHSCORES") or {}
  local was = redis.call("HGET", KEY.groups(base), group)
  local usersKey, user = KEY.groupUsers(base, group), parsed.user or ""
  if #first == 0 then
    if tryCall("ZREM", groupKey, shape) == 1 and (tryCall("HINCRBY", usersKey, user, -1) or 0) <= 0 then
      tryCall("HDEL", usersKey, user)
    end
    if (tryCall("ZCARD", groupKey) or 0) == 0 then
      redis.call("HDEL", KEY.groups(base), group)
      redis.call("DEL", logKey, usersKey)
      forgetFitIndexes(base, group)
      return nil, was
    end
  else
    if tryCall("ZADD", groupKey, first[2], shape) == 1 then tryCall("HINCRBY", usersKey, user, 1) end
  end
  local version = nextGroupVersion(was)
  redis.call("HSET", KEY.groups(base), group, version)
  if not was then tryCall("ZADD", logKey, 0, "") end
  tryCall("ZADD", logKey, version, shape)
  return version, was, first[2]
end
