--[[
  Removes runs and their logs, all or nothing. Running runs are refused:
  cancel them first. A namespace left empty is forgotten entirely.

  KEYS[1] ids    zset of every run id, score 0

  ARGV[1] base; ARGV[2..] run ids

  Returns {1, count}, {-1, id} for an unknown run, {-4, id} for a running one.
]]
-- @include runs
-- @include namespace
local base = ARGV[1]

for i = 2, #ARGV do
  local status = redis.call("HGET", jobKey(base, ARGV[i]), "status")
  if not status then return {-1, ARGV[i]} end
  if status == "running" then return {-4, ARGV[i]} end
end
for i = 2, #ARGV do
  local runId = ARGV[i]
  local runKey = jobKey(base, runId)
  local status = redis.call("HGET", runKey, "status")
  local prev = status == "completed" and "completed" or "failed"
  if status == "staged" then
    unstage(base, runId, storedShape(runKey))
    prev = "waiting"
  end
  removeRun(base, runId, prev)
end
forgetIfEmpty(base)
return {1, #ARGV - 1}
