#!lua
--[[
  `fitq quota set|rm`: sets or removes a user's quota, the default one
  (user `.default`: every user's without a quota of their own), or a
  project's (user `project=<name>`: includes/quotas/projectOwner.lua). A quota is a
  hash `quota:<user>`: `running` (most runs at once), `staged` (most runs
  not ended, refused at staging) and `res:<resource>` (most of a resource
  their running runs hold at once). The claim checks it against what the
  user's runs hold (`usage:<user>`, counted whether a quota is set or not,
  includes/quotas/), so a quota holds at once, for runs staged before it
  too; lowering it below what the user holds stops nothing, it only lets no
  more start until enough end.

  KEYS[1]  quotas  set: the users that have a quota (and `.default`)

  ARGV[1] base, ARGV[2] user (or ".default"), ARGV[3] "set" or "remove";
  then for set: field, value pairs (fields as above, values checked by
  src/operations/quotas.ts); for remove: the fields to remove (none: the
  whole quota).

  Returns {CODE.ok}; {CODE.unchanged} when remove finds no such quota (or
  none of the fields). Workers are told (`poolReleased`): runs a raised or
  removed quota lets start start at once.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing changes, the user is told so.
]]
-- @include namespace/publish
local quotasKey = KEYS[1]
local base, user, action = ARGV[1], ARGV[2], ARGV[3]
local key = KEY.quota(base, user)

if action == "set" then
  for i = 4, #ARGV, 2 do redis.call("HSET", key, ARGV[i], ARGV[i + 1]) end
  redis.call("SADD", quotasKey, user)
else
  local removed
  if #ARGV == 3 then
    removed = redis.call("DEL", key)
  else
    removed = 0
    for i = 4, #ARGV do removed = removed + redis.call("HDEL", key, ARGV[i]) end
  end
  if redis.call("EXISTS", key) == 0 then redis.call("SREM", quotasKey, user) end
  if removed == 0 then return {CODE.unchanged} end
end
publish(base, {type = "poolReleased"})
return {CODE.ok}
