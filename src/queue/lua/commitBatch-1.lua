#!lua
--[[
  Commits a batch staged in chunks (stageRuns with a batch id): its runs,
  hidden from fitq's readers until now, are there for all of them at once,
  and workers are woken. O(1): the runs keep their `batch` field, which
  means nothing once the batch has left `batches`.

  KEYS[1]  batches     hash: open batch id -> "deadline count" (epoch ms by the
                       Redis server's clock, runs staged)

  ARGV[1] base, ARGV[2] batch id

  Returns {CODE.ok, count}, or {CODE.batchExpired} when the batch is not
  open: its deadline passed (its runs are garbage: the stager removes them,
  or claims do).

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): the batch stays open and the stager gives it up.
]]
-- @include batches/batchState
-- @include namespace/publish
local batchesKey = KEYS[1]
local base, batch = ARGV[1], ARGV[2]

local state, _, count = batchState(base, batch)
if state ~= "open" then return {CODE.batchExpired} end
redis.call("HDEL", batchesKey, batch)
publish(base, {type = "staged", count = count})
return {CODE.ok, count}
