#!lua
--[[
  Removes runs and their logs, all or nothing. Running runs are refused:
  cancel them first. A namespace left empty is forgotten entirely. Runs
  that wait for a removed staged run can never start: they end canceled
  (or stay parked, if kept), see includes/removeWithDependents.lua.

  KEYS[1] ids    zset of every run id, score 0 (removeRun takes each id out)

  ARGV[1] base; ARGV[2..] run ids

  Returns {CODE.ok, count}, {CODE.unknownRun, id} or {CODE.runRunning, id}.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include batchState
-- @include jobKey
-- @include storedShape
-- @include unstage
-- @include removeRun
-- @include removeWithDependents
-- @include serverNow
-- @include forgetIfEmpty
local idsKey = KEYS[1]
local base = ARGV[1]

for i = 2, #ARGV do
  local run = redis.call("HMGET", jobKey(base, ARGV[i]), "status", "batch")
  local status = run[1]
  -- (A run of a batch not committed is not there yet.)
  if not status or batchState(base, run[2]) then return {CODE.unknownRun, ARGV[i]} end
  if status == "running" then return {CODE.runRunning, ARGV[i]} end
end
for i = 2, #ARGV do
  local runId = ARGV[i]
  local runKey = jobKey(base, runId)
  local status = redis.call("HGET", runKey, "status")
  local prev = status == "completed" and "completed" or "failed"
  if status == "staged" then
    unstage(base, runId, storedShape(runKey))
    removeWithDependents(base, runId, "waiting", serverNow(), 1000, 100)
  else
    removeRun(base, runId, prev)
  end
end
forgetIfEmpty(base)
return {CODE.ok, #ARGV - 1}
