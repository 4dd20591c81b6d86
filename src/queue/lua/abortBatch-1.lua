#!lua flags=allow-oom
--[[
  Removes runs of a batch its stager gives up (a chunk was refused, or it
  could not commit), in bounded calls: each run of the list that is still
  staged in that batch goes, as if never staged. With `last`, the batch
  leaves `batches` too. A batch no longer in `batches` (committed: its
  stager lost the commit's reply) loses nothing. A namespace left empty is
  forgotten entirely.

  KEYS[1] batches  hash: open batch id -> "deadline count"

  ARGV[1] base, ARGV[2] batch id, ARGV[3] last ("1" or "0"), ARGV[4..] run ids

  Returns {CODE.ok, count removed}.

  Flags: allow-oom: it only deletes, and a chunk refused while Redis is out
  of memory must not leave the chunks before it behind.
]]
-- @include jobKey
-- @include storedShape
-- @include unstage
-- @include removeRun
-- @include batchRunGone
-- @include batchState
-- @include forgetIfEmpty
local batchesKey = KEYS[1]
local base, batch, last = ARGV[1], ARGV[2], ARGV[3] == "1"

if not batchState(base, batch) then return {CODE.ok, 0} end
local removed = 0
for i = 4, #ARGV do
  local runId = ARGV[i]
  local runKey = jobKey(base, runId)
  local run = redis.call("HMGET", runKey, "status", "batch")
  if run[1] == "staged" and run[2] == batch then
    unstage(base, runId, storedShape(runKey))
    removeRun(base, runId, "waiting")
    batchRunGone(base, batch)
    removed = removed + 1
  end
end
if last then redis.call("HDEL", batchesKey, batch) end
forgetIfEmpty(base)
return {CODE.ok, removed}
