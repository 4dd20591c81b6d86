--[[
  Removes runs and their logs, all or nothing. Running runs are refused:
  cancel them first. A namespace left empty is forgotten entirely.

  KEYS[1] runs   zset of every run id (and base .. "ids", its lexicographic index)

  ARGV[1] base; ARGV[2..] run ids

  Returns {1, count}, {-1, id} for an unknown run, {-4, id} for a running one.
]]
-- @include amounts
-- @include runs
-- @include namespace
local base = ARGV[1]

for i = 2, #ARGV do
  local status = redis.call("HGET", base .. "run:" .. ARGV[i], "status")
  if not status then return {-1, ARGV[i]} end
  if status == "running" then return {-4, ARGV[i]} end
end
for i = 2, #ARGV do
  local runId = ARGV[i]
  local runKey = base .. "run:" .. runId
  if redis.call("HGET", runKey, "status") == "staged" then unstage(base, runId, storedShape(runKey)) end
  redis.call("DEL", runKey, runKey .. ":log")
  redis.call("ZREM", KEYS[1], runId)
  redis.call("ZREM", base .. "ids", runId)
end
forgetIfEmpty(base)
return {1, #ARGV - 1}
