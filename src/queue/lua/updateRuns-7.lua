#!lua
--[[
  Edits staged (or held) runs: each run's job data (what it is), its BullMQ
  priority (the job's `priority`, `opts` and its score in `prioritized`),
  its place in the staged index under its new shape and its project
  (includes/quotas/moveProject.lua), in one step, so a run
  is either claimed with its old demands or staged with its new ones.

  Each run is looked at on its own (per-run outcomes): it is changed only if
  it is still staged or held and its job data (as fitq wrote it, `runData`:
  BullMQ's updateData changes only `data`) is still what the editor read
  (so an edit never builds on a run that changed meanwhile, nor drops a
  concurrent edit); otherwise it is left as it is and reported.

  Where the run is indexed it stays indexed, where not (a held run, one
  waiting for a dependency or its begin time: kept out of the index) it
  stays out: it leaves the staged index of its old shape only if it was in
  it, and enters the new shape's then; its score in `prioritized` changes
  only if it is there. Its staging sequence is kept: among runs of the same
  priority it keeps its place in the order. A hold a worker had on it goes
  (the next claim judges the run anew).

  KEYS[1]  groups      hash: group of shapes with staged runs -> version
  KEYS[2]  holds       hash: held run id -> worker holding it
  KEYS[3..6] what its includes touch, each named at its top: batches,
  runs:prioritized, runs:events, runs:meta
  KEYS[7]  admins      set: admins, whose requests may edit any signed run (includes/requests/)

  ARGV[1] base     key prefix, e.g. "fitq:{default}:"
  ARGV[2] count    number of runs; then, for each run, 7 arguments:
          id, expected data (the job data the edit was made from), new data
          (JSON text), new shape, new priority (fitq's, an integer), what
          changed ("priority,resources", for the event), the request
          ("<by> <at> <signature>", or ""): a run its user signed is edited
          only at the request of its user or an admin
          (includes/requests/admitRequest.lua)

  Returns a list, one entry per run in the order given:
    "updated"            changed
    "status|<status>"    not staged or held (claimed, ended...): unchanged
    "changed"            its job data is not what the editor read: unchanged
    "notYours|<user>"    signed by its user, who or an admin did not ask:
                         unchanged
    "gone"               no such run (removed meanwhile, or of a batch not
                         committed)
  Each run changed emits `updated` on the queue's event stream (jobId,
  changes); if any indexed run changed, `staged` is published so workers
  claim again at once.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing is changed, the user is told so.
]]
-- @include batches/batchState
-- @include bullmq/emitEvent
-- @include bullmq/orderScore
-- @include bullmq/rescoreJob
-- @include bullmq/updateJob
-- @include lifecycle/runDataText
-- @include namespace/publish
-- @include namespace/tryCall
-- @include shape/indexShape
-- @include requests/admitRequest
-- @include quotas/moveProject
-- (indexShape keeps it.)
local groupsKey = KEYS[1]
local holdsKey = KEYS[2]
-- (Touched by its includes.)
local batchesKey = KEYS[3]
local queuePrioritizedKey = KEYS[4]
local queueEventsKey = KEYS[5]
local queueMetaKey = KEYS[6]
local adminsKey = KEYS[7]
local base, count = ARGV[1], tonumber(ARGV[2])
local ARG0 = 3
local EDITABLE = {staged = true, held = true}

local replies = {}
local reindexed = 0
for i = 0, count - 1 do
  local first = ARG0 + i * 7
  local id, expected, data, shape, priority, changes, request =
    ARGV[first], ARGV[first + 1], ARGV[first + 2], ARGV[first + 3], ARGV[first + 4], ARGV[first + 5], ARGV[first + 6]
  local key = KEY.run(base, id)
  local run = tryCall("HMGET", key, "status", "batch", "shape", "seq", "score") or {}
  local status = run[1]
  if not status or batchState(base, run[2]) then
    replies[#replies + 1] = "gone"
  elseif not EDITABLE[status] then
    replies[#replies + 1] = "status|" .. status
  elseif runDataText(base, id) ~= expected then
    replies[#replies + 1] = "changed"
  else
    local owner = admitRequest(base, id, "update", request)
    if owner then
      replies[#replies + 1] = "notYours|" .. owner
    else
      local oldShape = run[3] or "none"
      local score = orderScore(priority, run[4] or 0)
      updateJob(base, id, data, priority)
      redis.call("HSET", key, "runData", data, "score", score, "shape", shape)
      moveProject(base, id, shape)
      -- Indexed (staged, may start now): moved to its new shape and score;
      -- kept out of the index (held, parked): stays out. Its place changed,
      -- a worker's hold on it goes.
      if shape ~= oldShape or score ~= run[5] then
        local oldStaged = KEY.staged(base, oldShape)
        if tryCall("ZSCORE", oldStaged, id) then
          redis.call("ZREM", oldStaged, id)
          indexShape(base, oldShape)
          redis.call("ZADD", KEY.staged(base, shape), score, id)
          indexShape(base, shape)
          reindexed = reindexed + 1
        end
        redis.call("HDEL", holdsKey, id)
      end
      rescoreJob(base, id, score)
      emitEvent(base, "updated", id, "changes", changes)
      replies[#replies + 1] = "updated"
    end
  end
end
if reindexed > 0 then publish(base, {type = "staged", count = reindexed}) end
return replies
