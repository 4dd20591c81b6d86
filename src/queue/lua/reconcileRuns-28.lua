#!lua
--[[
  Brings fitq's index of runs back in line with what BullMQ's API (or Bull
  Board) did to the namespace's queue, a bounded amount of work per call.
  Workers call it on every poll; commands that change runs BullMQ may have
  touched (`fitq update`) call it until it is done. Reads never do.

  1. Events. It reads the queue's event stream after the last entry it read
     (`events` in `reconcile`) and looks at the job of each `added` and
     `removed` event, and of each `waiting` event from another state than
     active (retry, promote): includes/bullmq/followEvents.lua.
  2. A full pass, for what emits no event (changePriority, drain) or events
     that name no job (clean) or were lost (trimmed, or the stream deleted
     by obliterate): over every run id of `ids`, then every job of
     `prioritized`, then of `delayed`, looking at each (followPass). It starts when BullMQ's
     priority counter `pc` has moved (an add, retry, changePriority or
     promote by BullMQ: fitq never touches it), a `cleaned` event is read,
     events were lost, or `prioritized` is found empty while the fit index
     holds runs (a drain; checked on every call, at the cost of two
     commands); `pass` in `reconcile` is where it is.
  3. The jobs of the `wait` list, which fitq never uses: each is looked at
     on every call. (The `delayed` set, where fitq parks runs that begin
     later, is looked at by the full pass.)
  4. The sweep of the fit index (includes/bullmq/followIndex.lua): every
     entry of every shape, a bounded number per call; an entry whose job is
     gone leaves the index. It goes on at a slow pace on every call (a few
     dozen entries: a safety net that finds what nothing said), and at the
     call's budget, saying there is more, once a call forgot runs (their
     entries are somewhere in the index) or the check of step 2 found
     `prioritized` empty; a call that forgets runs while a sweep is under
     way has it start over when done (`index`, `indexUrgent`, `indexAgain`
     in `reconcile`).
  5. Upkeep of parked runs (see includes/lifecycle/placeStaged.lua): runs whose begin
     time has come join the fit index (as a claim does), and dependents of
     runs with many (`dependents-pending`) are judged, a batch per call.

  No step's work grows with the number of runs, shapes or arrays: each
  goes by the budget, from where the last call stopped.
  (job.updateData emits no event and moves no counter: the data it rewrote
  is put back by the next full pass; fitq never runs, shows or verifies it.)

  Looking at a job (includes/bullmq/followJob.lua), one step per action of
  BullMQ's it follows (includes/bullmq/follow*.lua):
  - a fitq run whose `data` BullMQ rewrote (job.updateData), whatever its
    status: its `data` is put back from fitq's own copy, `runData`, which
    is what fitq runs, shows, indexes and verifies a signature against (so
    the change never took effect); then looked at as below (followUpdateData);
  - its hash is gone (job.remove, clean, drain, obliterate): fitq forgets
    the run: its id, staged index entries, hold, output and state entries
    (followRemove);
  - it is not a fitq run (not in `ids`, or without fitq's run data: added by
    plain BullMQ) and waits (prioritized, wait, delayed): it ends `rejected`
    ("not a fitq run (added without fitq's run data)"), as a failed job,
    and is listed by fitq (added to `ids`) when its id is one fitq accepts;
    it never runs (followAdd);
  - a run that ended but has no `finishedOn` (BullMQ retried it: job.retry,
    retryJobs): staged again at its place in the order, with its demands,
    as a new attempt (`restaged` reset, `retried` + 1), its packed output
    a stream again, with a `restaged` entry; workers are told (followRetry);
  - a parked staged run (held, waiting for its begin time or its
    dependencies): put back where it belongs (placeStaged), never in the
    fit index while it may not start; one BullMQ promoted (job.promote:
    moved from `delayed` to `prioritized`) begins now (followPromote);
  - a staged run whose BullMQ priority is not the one its order says
    (changePriority), or that is missing from `prioritized` or its staged
    index, or is in `wait`: an unsigned run takes the new priority (fitq's
    priority = 1,000,001 - BullMQ's; BullMQ's 0, "no priority", is fitq's
    default 0; below -1,000,000 is -1,000,000), its data, opts, score and
    index entries rewritten; a signed run keeps its signed priority (its
    BullMQ priority and score are restored). It goes back to `prioritized`
    (followChangePriority).

  KEYS[1]  ids                 zset of every run id, score 0
  KEYS[2]  reconcile           hash: events, pc, drained, pass, index,
                               indexUrgent, indexAgain
  KEYS[3]  dependents-pending  hash: run (or array) whose dependents are still
                               to be judged -> SSCAN cursor
  KEYS[4..26] what its includes touch, each named at its top: seq, groups,
  KEYS[27] fair-share    hash: fair share's settings (includes/fairshare/)
  KEYS[28] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  batches, arrays, arrays:tally, workers, holds, pool:capacity, pool:used,
  settings, stats, runs:wait, runs:active, runs:prioritized, runs:delayed,
  runs:waiting-children, runs:completed, runs:failed, runs:events,
  runs:meta, runs:id, runs:pc, runs:marker

  ARGV[1] base, ARGV[2] budget (jobs and events looked at per call, about),
  ARGV[3] logMaxLines

  A job it rejects ends now by the Redis server's clock.

  Returns {more, actions}: more is 1 when work is left for another call
  (call again); actions lists "kind|runId|detail" for what it did: retried
  (detail: the status it had), rejected, priority (the new priority),
  priorityKept (the signed priority kept), forgotten, promoted, dataKept
  (its data put back; detail: its status).
  Writes nothing in a namespace without runs or jobs.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): it catches up once Redis has room again.
]]
-- @include bullmq/followEvents
-- @include bullmq/followIndex
-- @include bullmq/followPass
-- @include bullmq/followWaitList
-- @include bullmq/prioritizedCount
-- @include bullmq/priorityCounter
-- @include bullmq/queueInUse
-- @include dependencies/settlePendingDependents
-- @include lifecycle/promoteDueRuns
-- @include namespace/forgetIfEmpty
-- @include namespace/publish
-- @include namespace/serverNow
local idsKey = KEYS[1]
local reconcileKey = KEYS[2]
local dependentsPendingKey = KEYS[3]
-- (Touched by its includes.)
local seqKey = KEYS[4]
local groupsKey = KEYS[5]
local batchesKey = KEYS[6]
local arraysKey = KEYS[7]
local arrayTallyKey = KEYS[8]
local workersKey = KEYS[9]
local holdsKey = KEYS[10]
local poolCapacityKey = KEYS[11]
local poolUsedKey = KEYS[12]
local settingsKey = KEYS[13]
local statsKey = KEYS[14]
local queueWaitKey = KEYS[15]
local queueActiveKey = KEYS[16]
local queuePrioritizedKey = KEYS[17]
local queueDelayedKey = KEYS[18]
local queueWaitingChildrenKey = KEYS[19]
local queueCompletedKey = KEYS[20]
local queueFailedKey = KEYS[21]
local queueEventsKey = KEYS[22]
local queueMetaKey = KEYS[23]
local queueIdKey = KEYS[24]
local queuePcKey = KEYS[25]
local queueMarkerKey = KEYS[26]
-- (Touched by its includes.)
local fairShareKey = KEYS[27]
local fairUsageKey = KEYS[28]
local base, budget, logMaxLines = ARGV[1], tonumber(ARGV[2]), ARGV[3]
-- Where a sweep of the fit index starts (see followIndex), and its slow
-- pace: the budget of a call that has no reason to hurry (about 40 entries).
local INDEX_START = "0|||||"
local INDEX_SLOW_WORK = 10

-- (A fit index left behind, its runs forgotten, still has its entries to sweep.)
if redis.call("EXISTS", idsKey, groupsKey) == 0 and not queueInUse(base) then return {0, {}} end

-- This call, as the steps that follow BullMQ's actions take it (see
-- bullmq/followJob): its budget, and what it did.
local call = {base = base, logMaxLines = logMaxLines, work = budget, actions = {}, forgotten = 0}
call.act = function(kind, runId, detail)
  call.actions[#call.actions + 1] = kind .. "|" .. runId .. "|" .. (detail or "")
  if kind == "forgotten" then call.forgotten = call.forgotten + 1 end
end

local state = redis.call("HMGET", reconcileKey, "events", "pc", "drained", "pass", "index", "indexUrgent", "indexAgain")
-- (A missing field is false, not nil.)
local cursor, pass = state[1] or nil, state[4] or nil

-- 1. Events.
local startPass, more
cursor, startPass, more = followEvents(call, cursor, budget)
if cursor ~= (state[1] or nil) then
  if cursor then redis.call("HSET", reconcileKey, "events", cursor) else redis.call("HDEL", reconcileKey, "events") end
end

-- 2. What starts a full pass: BullMQ's counter moved, or a drain (the fit
-- index holds runs and `prioritized` none; once, when it is first seen).
local pc = priorityCounter(base)
if pc ~= (state[2] or "") then
  startPass = true
  if pc == "" then redis.call("HDEL", reconcileKey, "pc") else redis.call("HSET", reconcileKey, "pc", pc) end
end
local drained = prioritizedCount(base) == 0 and redis.call("EXISTS", groupsKey) == 1
if drained and not state[3] then
  startPass = true
  redis.call("HSET", reconcileKey, "drained", "1")
elseif not drained and state[3] then
  redis.call("HDEL", reconcileKey, "drained")
end

-- 3. The wait list (at least one job per call).
followWaitList(call)

-- 4. The full pass, where it was (or from the start).
if startPass then pass = "ids:" end
pass = followPass(call, pass)
if pass ~= (state[4] or nil) then
  if pass then redis.call("HSET", reconcileKey, "pass", pass) else redis.call("HDEL", reconcileKey, "pass") end
end

-- 5. The sweep of the fit index: at the budget left (at least a slow
-- pace's) once runs were forgotten or a drain seen, else at a slow pace.
local index, urgent, again = state[5] or nil, state[6] == "1", state[7] == "1"
if call.forgotten > 0 or (drained and not state[3]) then
  if index and not again then again = true end
  urgent = true
end
index = followIndex(call, index or INDEX_START, urgent and math.max(call.work, INDEX_SLOW_WORK) or INDEX_SLOW_WORK)
local swept = not index
if swept and again then index, again = INDEX_START, false
elseif swept then urgent = false end
if index ~= (state[5] or nil) then
  if index then redis.call("HSET", reconcileKey, "index", index) else redis.call("HDEL", reconcileKey, "index") end
end
if urgent ~= (state[6] == "1") then
  if urgent then redis.call("HSET", reconcileKey, "indexUrgent", "1") else redis.call("HDEL", reconcileKey, "indexUrgent") end
end
if again ~= (state[7] == "1") then
  if again then redis.call("HSET", reconcileKey, "indexAgain", "1") else redis.call("HDEL", reconcileKey, "indexAgain") end
end

-- 6. Parked runs: those due join the index; dependents still to be judged.
local now = serverNow()
local promoted = promoteDueRuns(base, now, 100)
if promoted > 0 then publish(base, {type = "staged", count = promoted}) end
if redis.call("EXISTS", dependentsPendingKey) == 1 then
  if settlePendingDependents(base, now, logMaxLines, math.max(math.floor(call.work), 100)) then more = true end
end

-- (Not while the fit index holds entries: the sweep has yet to drop them.)
if (call.forgotten > 0 or swept) and redis.call("EXISTS", groupsKey) == 0 then forgetIfEmpty(base) end
return {(more or pass or urgent) and 1 or 0, call.actions}
