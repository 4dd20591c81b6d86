#!lua
--[[
  Removes ended runs, as `fitq runs clean` selected them: each named run
  that has ended with one of the given statuses, no later than the given
  time, goes with its logs and keys. Any other (staged, running, already
  gone, another status, ended later) is left as it is, so a selection read
  a moment before is applied safely. A namespace left empty is forgotten
  entirely. The caller sends a bounded batch of ids per call.

  KEYS[1] ids    zset of every run id, score 0 (removeRun takes each id out)

  ARGV[1] base; ARGV[2] statuses that may be removed, comma separated
  (completed, failed, canceled, lost, rejected, timeout); ARGV[3] the latest
  finishedOn to remove, epoch ms ("" for any); ARGV[4..] run ids

  Returns the number of runs removed.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include jobKey
-- @include removeRun
-- @include forgetIfEmpty
local idsKey = KEYS[1]
local base, latest = ARGV[1], tonumber(ARGV[3])

local removable = {}
for status in string.gmatch(ARGV[2], "[^,]+") do
  if status ~= "staged" and status ~= "running" then removable[status] = true end
end

local removed = 0
for i = 4, #ARGV do
  local runId = ARGV[i]
  local run = redis.call("HMGET", jobKey(base, runId), "status", "finishedOn")
  if run[1] and removable[run[1]] and (latest == nil or (tonumber(run[2]) or 0) <= latest) then
    removeRun(base, runId, run[1] == "completed" and "completed" or "failed")
    removed = removed + 1
  end
end
if removed > 0 then forgetIfEmpty(base) end
return removed
