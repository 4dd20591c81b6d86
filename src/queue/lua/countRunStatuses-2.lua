#!lua flags=no-writes
--[[
  Counts by fitq status a part of the runs of a queue state whose size
  alone does not tell their status (for /metrics, beside readMetrics):
  waiting-children holds held runs and staged runs parked there (waiting
  for their dependencies or their array), `failed` every ended status but
  completed. One call reads at most ARGV[4] members (at most MAX_PART),
  from position ARGV[3] on, so a namespace of 100,000 canceled runs is
  counted in many short calls, never in one long one. Writes nothing.

  KEYS[1] runs:waiting-children  BullMQ's waiting-children (a zset)
  KEYS[2] runs:failed            BullMQ's failed (a zset)
  (and the job hashes of the runs read)

  ARGV[1] base
  ARGV[2] state   "parked" (waiting-children) or "ended" (failed)
  ARGV[3] from    the position of the first member to read (0: the first)
  ARGV[4] count   members to read

  Returns {counts, read}: counts flat status, count; read the members read
  (fewer than asked: the state's end). A member written by hand (no run id,
  no job hash) counts as its state says: staged, or failed.

  Flags: no-writes: it only reads, so it runs while Redis is out of memory
  and on a read-only replica, for a Redis user allowed to read only.
]]
-- @include bullmq/statusesInState
local queueWaitingChildrenKey = KEYS[1]
local queueFailedKey = KEYS[2]
local base, state = ARGV[1], ARGV[2]
local MAX_PART = 1000
local from = math.max(0, math.floor(tonumber(ARGV[3]) or 0))
local count = math.min(MAX_PART, math.max(0, math.floor(tonumber(ARGV[4]) or 0)))
if count == 0 then return {{}, 0} end

local counts, read = statusesInState(base, state, from, count)
local flat = {}
for status, n in pairs(counts) do
  flat[#flat + 1] = status
  flat[#flat + 1] = n
end
return {flat, read}
