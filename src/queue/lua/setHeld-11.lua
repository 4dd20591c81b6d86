#!lua
--[[
  `fitq hold` / `fitq release`: holds staged runs (a held run is never
  claimed: it leaves the fit index for BullMQ's waiting-children, see
  includes/lifecycle/placeStaged.lua) or releases held ones (back in the index at
  their original place in the order, unless they still wait for their begin
  time or dependencies). Each run is judged on its own: a run that is not
  staged is refused with its status, the rest are done.

  KEYS[1]  ids         zset of every run id (a run must be listed there)
  KEYS[2..10] what its includes touch, each named at its top: groups,
  batches, holds, runs:wait, runs:prioritized, runs:delayed,
  runs:waiting-children, runs:events, runs:meta
  KEYS[11] admins      set: admins, whose requests may hold any signed run (includes/requests/)

  ARGV[1] base, ARGV[2] "hold" or "release", ARGV[3..] pairs of a run id
  and the request for it ("<by> <at> <signature>", or ""): a run its user
  signed is held or released only at the request of its user or an admin
  (includes/requests/admitRequest.lua)

  Returns one entry per run id, "outcome|detail": held, released (detail:
  where it went: staged, delayed, deps), unchanged (already held, or not
  held), notStaged (detail: its status), notYours (detail: its user),
  unknown.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing is held or released.
]]
-- @include batches/batchState
-- @include namespace/serverNow
-- @include lifecycle/placeStaged
-- @include namespace/publish
-- @include requests/admitRequest
local idsKey = KEYS[1]
-- (Touched by its includes.)
local groupsKey = KEYS[2]
local batchesKey = KEYS[3]
local holdsKey = KEYS[4]
local queueWaitKey = KEYS[5]
local queuePrioritizedKey = KEYS[6]
local queueDelayedKey = KEYS[7]
local queueWaitingChildrenKey = KEYS[8]
local queueEventsKey = KEYS[9]
local queueMetaKey = KEYS[10]
local adminsKey = KEYS[11]
local base, mode = ARGV[1], ARGV[2]
local now = serverNow()

local results, released = {}, 0
for i = 3, #ARGV, 2 do
  local runId = ARGV[i]
  local key = KEY.run(base, runId)
  local run = redis.call("HMGET", key, "status", "held", "batch")
  local status = run[1]
  if not status or redis.call("ZSCORE", idsKey, runId) == false or batchState(base, run[3]) then
    results[#results + 1] = "unknown|"
  elseif status ~= "staged" then
    results[#results + 1] = "notStaged|" .. status
  elseif (run[2] == "1") == (mode == "hold") then
    results[#results + 1] = "unchanged|"
  else
    local owner = admitRequest(base, runId, mode, ARGV[i + 1])
    if owner then
      results[#results + 1] = "notYours|" .. owner
    elseif mode == "hold" then
      redis.call("HSET", key, "held", "1")
      placeStaged(base, runId, now)
      results[#results + 1] = "held|"
    else
      redis.call("HDEL", key, "held")
      local where = placeStaged(base, runId, now)
      if where == "staged" then released = released + 1 end
      results[#results + 1] = "released|" .. where
    end
  end
end
if released > 0 then publish(base, {type = "staged", count = released}) end
-- A held run may have been a worker's blocked head: workers look again.
if mode == "hold" then publish(base, {type = "staged", count = 0}) end
return results
