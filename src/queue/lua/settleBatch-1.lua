#!lua flags=allow-oom
--[[
  After commitBatch, takes the batch's id out of its runs (their job's
  `batch` field), in bounded calls: once the batch has left `batches` the
  field means nothing, and it is a good part of a staged run's job hash
  (docs/benchmarks.md, "Bytes per run"). Only a run still carrying this
  batch's id loses it; nothing is done while the batch is still in
  `batches` (open, or expired uncommitted: its runs are garbage, and the
  field is what says so). Left undone (the stager died after the commit),
  the fields stay, meaning nothing.

  KEYS[1]  batches     hash: open batch id -> "deadline count"

  ARGV[1] base, ARGV[2] batch id, ARGV[3..] run ids

  Returns {CODE.ok, count of runs that lost the field}.

  Flags: allow-oom: it only deletes.
]]
-- @include namespace/tryCall
local batchesKey = KEYS[1]
local base, batch = ARGV[1], ARGV[2]

-- (A `batches` key written by hand as another type holds no batch.)
if tryCall("HEXISTS", batchesKey, batch) == 1 then return {CODE.ok, 0} end
local count = 0
for i = 3, #ARGV do
  local key = KEY.run(base, ARGV[i])
  if tryCall("HGET", key, "batch") == batch then
    redis.call("HDEL", key, "batch")
    count = count + 1
  end
end
return {CODE.ok, count}
