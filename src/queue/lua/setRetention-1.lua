#!lua
--[[
  Changes the namespace's history retention (see includes/retention.lua).
  A field set to "" goes back to its default; a settings hash left empty
  is gone, and a namespace left empty with it is forgotten entirely.
  Removing the runs now beyond the new limits is `cleanRuns`' work.

  KEYS[1] settings   hash: keepCompleted, keepFailed, keepAgeMs

  ARGV[1] base; ARGV[2..] field, value pairs: a count or age in ms
  (validated by the caller), "off" for no limit, "" for the default

  Returns the settings as stored now, a flat list of fields and values.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include forgetIfEmpty
local settingsKey = KEYS[1]
local base = ARGV[1]
local fields = {keepCompleted = true, keepFailed = true, keepAgeMs = true}

for i = 2, #ARGV - 1, 2 do
  if not fields[ARGV[i]] then return redis.error_reply("unknown retention setting " .. ARGV[i]) end
end
for i = 2, #ARGV - 1, 2 do
  if ARGV[i + 1] == "" then
    redis.call("HDEL", settingsKey, ARGV[i])
  else
    redis.call("HSET", settingsKey, ARGV[i], ARGV[i + 1])
  end
end
forgetIfEmpty(base)
return redis.call("HGETALL", settingsKey)
