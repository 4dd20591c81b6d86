#!lua
--[[
  Claims for a worker the first staged run, in order (higher priority, then
  older), that fits its free capacity, and reserves its demands. Cost grows
  with the number of groups of demand shapes (shapes demanding the same
  resources, arrays' limits aside, includes/shape/readShape.lua; and of
  holds, one per worker at most) and with the shapes that fit the worker
  older than the run it starts or holds, not with the number of staged runs
  nor of shapes too big for it: it walks its class's fit indexes
  (includes/classes/: the shapes that can ever fit workers of its capacity,
  brought up to date from the group logs, 256 changed shapes per call at
  most), and a shape of an array at its limit leaves them until a run of
  the array ends. The shapes of a group needing a resource the worker and
  the pool lack are never looked at, nor those after the run it starts or,
  once it holds a blocked head, those of a group none of whose runs can
  start now (includes/candidates/nextCandidate.lua).

  A resource defined in the namespace's pool (`fitq pool set`) is reserved
  from the pool, the rest from the worker, in the same step.

  What the worker sees (its candidates: the first staged run of every shape
  that fits its total capacity, includes/candidates/, taken oldest first
  as far as the claim needs them), the policy that
  picks among them (backfill or fifo, the blocked head and what it holds,
  includes/policy/) and GPU device placement (includes/devices/) are
  shared with explainRuns, which says why staged runs wait; this script acts
  on the decision. Under backfill a hold stays with its worker until the run
  starts, the worker goes, or an older run is held elsewhere (its worker
  drops it on its next claim; until then it no longer counts). So the head
  starts as soon as the runs that were running when it became the head have
  ended, and a stream of small runs cannot starve it; the oldest blocked run
  is always held by a worker that fits it, so every run starts in turn. Any
  worker that can start a held run now does.

  KEYS[1]  worker:<name>           hash: name, token, running, holding, ...
  KEYS[2]  worker:<name>:capacity  hash: resource -> total amount
  KEYS[3]  worker:<name>:free      hash: resource -> free amount
  KEYS[4]  worker:<name>:runs      set of the worker's running run ids
  KEYS[5]  workers                 zset: worker name -> lease deadline
  KEYS[6]  holds                   hash: held run id -> worker holding it
  KEYS[7]  pool:capacity           hash: cluster-wide resource -> total amount
  KEYS[8]  pool:used               hash: cluster-wide resource -> amount reserved
  KEYS[9]  worker:<name>:devices   hash: GPU device index -> free share (1 = whole device)
  KEYS[10] groups                  hash: group of shapes with staged runs -> version
  KEYS[11] worker:<name>:reserved  hash: run id -> what its claim reserved (JSON)
  KEYS[12..26] what its includes touch, each named at its top: ids, batches,
  arrays, arrays:tally, stats, dependents-pending, runs:wait, runs:active,
  runs:prioritized, runs:delayed, runs:waiting-children, runs:completed,
  runs:failed, runs:events, runs:meta
  KEYS[27] reconcile            hash: where reconcileRuns is (a claim sets its `pass`)
  KEYS[28] worker:<name>:gpus   hash: its GPU probe's last reading (`at`, and per
                                device its state: ok, busy or lost)
  KEYS[29] fair-share    hash: fair share's settings (includes/fairshare/, accrueUsage)
  KEYS[30] fair-usage    hash: user -> decayed usage (includes/fairshare/)

  The `gpu` demand of the run it starts is placed on the worker's GPU
  devices, if it has any, in the same step, never on one its GPU probe
  last found busy (a process fitq did not start) or lost, nor on any from a
  reading older than the worker registered (`gpuProbe`: its probe interval
  x 2; includes/devices/readGpuReadings.lua); a whole gpu=N above 1 never
  on its MIG devices (`mig`), as CUDA shows a process one. The run records its `devices`,
  `deviceShare` and the worker share it `reserved`; the worker records the
  same, with the pool share and the epoch, in worker:reserved, which gives it
  all back even if the job hash is deleted meanwhile.

  A staged index entry whose job no longer exists, or is no longer staged
  (BullMQ removed it: job.remove, drain, clean, obliterate), is dropped when
  it comes first in its shape, and the next run of that shape is looked at
  instead; a shape left without staged runs leaves its group (indexShape).
  One whose job is gone sets reconcile's `pass` to start a full pass, which
  forgets the run (reconcileRuns).
  So are entries fitq never writes, which only a hand could have put there
  (see includes/candidates/checkStaged.lua, includes/shape/parseShape.lua,
  includes/candidates/readOlderHold.lua): an
  index member that is no run id, whose key holds no job hash, whose job is
  of another shape, or whose run is held by a live claim (a running run put
  back as staged); a member of a group that is no shape of it, or whose
  index is no sorted set; a field of `groups` that is no group, or whose key
  is no sorted set; a hold on no staged run. Those are logged in Redis's log
  (WARNING). At most DROP_LIMIT (includes/candidates/noteDrop.lua) go per call; a
  claim that leaves more replies waiting, starts no run newer than the
  entries it has not looked at yet, and publishes `staged` so workers claim
  again at once. Every
  key named by what the claim read is read as the type it is before
  anything is written, so a hostile entry can never make the claim fail
  half done.

  ARGV[1] base      key prefix
  ARGV[2] token     the worker's registration token (fencing)
  ARGV[3] maxRuns   most runs at once (0 = no limit)
  ARGV[4] policy    "backfill" or "fifo"
  ARGV[5] placement "pack" or "spread" (fractional gpu demands on devices)
  ARGV[6] defaultTimeLimit  ms ("" for none): the time limit of a run
                            staged without one
  ARGV[7] maxTimeLimit      ms ("" for none): runs staged with a longer
                            limit are never claimed; one staged without gets
                            the default, else this, as its limit
  ARGV[8] maxBare   most runs at once that demand nothing (0 = no limit,
                    as when absent): capacity bounds the others

  A run with a time limit (its own or the worker's) records it (`runLimit`,
  ms) and its `deadline` (the claim's time plus the limit, server clock), in
  its job hash and in the worker's record of the claim: a blocked head's
  earliest start (its shadow time) is known from the deadlines of the runs
  its worker runs, and a later run that ends before then may use what the
  head holds (includes/policy/backfillsByTime.lua).

  Preemption (includes/preemption/preemptFor.lua): when the worker holds a
  blocked head that no other worker could start now, and its running runs
  staged --preemptible with a lower priority, past their --preempt-after,
  would free enough for it, the fewest of them (then the most recently
  started) are marked `preempting` in the same step as the hold: the hold
  keeps what they free for the head, and they keep their reservation until
  their end is recorded (finishRun, status "preempted").

  The run it starts records the Redis server's clock as its job's processedOn,
  and, on its first start, how long it waited in the namespace's run
  statistics (`stats`, includes/stats/runTimeBounds.lua).

  Taking a hold while another live worker holds a newer run, or starting a
  run another worker holds, publishes `holds`: workers holding a run claim
  again at once (and drop the hold, or hold the next run, or backfill).

  First it moves up to 100 runs whose begin time has come (`--begin`,
  `--delay`, a retry's backoff) from BullMQ's `delayed` into the fit index,
  as BullMQ's moveToActive promotes due delayed jobs
  (includes/lifecycle/promoteDueRuns.lua), so a worker polling or woken starts them on
  time; it replies how long until the next one is due.

  Returns one of:
    {CODE.ok, runId, epoch, runFields, attempt}  claimed; runFields is the job hash, flat;
                   attempt: which attempt of the run this is (its history's length + 1)
    {CODE.waiting, ignored, heldRunId, nextBegin, preempting} nothing may start now, something fits the total
                              capacity; heldRunId is the blocked head ("" if none);
                              preempting: the worker's runs being preempted
                              (for it, or for a head held before), each with
                              the run it makes room for (runId, forRun, ...),
                              which the worker signals and stops
    {CODE.idle, ignored, "", nextBegin}  no staged run fits the worker's total capacity
                   (nextBegin: ms until the next delayed run is due, -1 if none)
    {CODE.full}    the worker already runs maxRuns runs
    {CODE.paused}  the namespace's queue is paused (`fitq pause`, BullMQ's pause)
    {CODE.indexing} its class's fit indexes caught up with part of what
                   changed (many shapes staged, a new class): claim again
    {CODE.drained} the worker is drained (`fitq drain`): it claims nothing and
                   gives up any hold it had (checked before full and paused, so
                   every reply but fenced tells the worker whether it is drained)
    {CODE.fenced}  the worker is not registered under this token, or its
                   lease has run out (fenced)
  ignored lists "group|missing,names|version" for the groups of shapes
  needing resources the worker does not declare (nor the pool); version
  changes when runs of the group come or go.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), before its first write: no run is claimed, started
  or reserved for part-way.
]]
-- @include batches/batchRunGone
-- @include candidates/candidateStream
-- @include classes/catchUpClass
-- @include bullmq/dequeueJob
-- @include policy/decideClaim
-- @include workers/dropWorkerHold
-- @include workers/holdsLease
-- @include shape/indexShape
-- @include namespace/publish
-- @include lifecycle/promoteDueRuns
-- @include bullmq/queuePaused
-- @include candidates/readClaimView
-- @include candidates/readPool
-- @include classes/parkedField
-- @include lifecycle/removeRun
-- @include namespace/serverNow
-- @include claims/takeRun
-- @include namespace/tryCall
-- @include classes/workerClass
-- @include quotas/forgetStagedUserRun
-- @include preemption/preemptFor
local workerKey = KEYS[1]
local workerCapacityKey = KEYS[2]
local workerFreeKey = KEYS[3]
local workerRunsKey = KEYS[4]
local workersKey = KEYS[5]
local holdsKey = KEYS[6]
local poolCapacityKey = KEYS[7]
local poolUsedKey = KEYS[8]
local workerDevicesKey = KEYS[9]
local groupsKey = KEYS[10]
local workerReservedKey = KEYS[11]
-- (Touched by its includes.)
local idsKey = KEYS[12]
local batchesKey = KEYS[13]
local arraysKey = KEYS[14]
local arrayTallyKey = KEYS[15]
local statsKey = KEYS[16]
local dependentsPendingKey = KEYS[17]
local queueWaitKey = KEYS[18]
local queueActiveKey = KEYS[19]
local queuePrioritizedKey = KEYS[20]
local queueDelayedKey = KEYS[21]
local queueWaitingChildrenKey = KEYS[22]
local queueCompletedKey = KEYS[23]
local queueFailedKey = KEYS[24]
local queueEventsKey = KEYS[25]
local queueMetaKey = KEYS[26]
local reconcileKey = KEYS[27]
local workerGpusKey = KEYS[28]
-- (Touched by its includes.)
local fairShareKey = KEYS[29]
local fairUsageKey = KEYS[30]
local base, token, maxRuns, policy = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local spread = ARGV[5] == "spread"
local limits = {default = tonumber(ARGV[6] or ""), max = tonumber(ARGV[7] or "")}
-- Changed shapes a claim brings into its class's fit indexes, at most.
local CATCH_UP_BUDGET = 256

local name = redis.call("HGET", workerKey, "name")
-- A worker whose lease ran out is as good as reaped: it may claim nothing.
if not name or not holdsLease(workerKey, workersKey, name, token) then return {CODE.fenced} end
local clock = serverNow()
if redis.call("HEXISTS", workerKey, "drained") == 1 then
  if dropWorkerHold(workerKey, holdsKey, name) then publish(base, {type = "holds", worker = name}) end
  return {CODE.drained}
end
local running = tonumber(redis.call("HGET", workerKey, "running") or "0")
if maxRuns > 0 and running >= maxRuns then return {CODE.full} end
-- Runs whose begin time has come join the index first.
local _, nextBegin = promoteDueRuns(base, clock, 100)
if queuePaused(base) then return {CODE.paused} end

-- What the worker sees (includes/candidates/), and what it does
-- (includes/policy/): the candidate it starts, the blocked run it holds.
local view = readClaimView(base, name, {
  capacity = workerCapacityKey, free = workerFreeKey, devices = workerDevicesKey, reserved = workerReservedKey,
  workers = workersKey, holds = holdsKey,
  gpus = workerGpusKey, gpuStaleMs = tonumber(redis.call("HGET", workerKey, "gpuProbe") or ""),
  mig = redis.call("HGET", workerKey, "mig") or nil,
}, clock, spread, readPool(poolCapacityKey, poolUsedKey), limits)
view.maxBare = tonumber(ARGV[8] or "") or 0
local stream, ignored = candidateStream(view)
-- Its class's fit indexes (includes/classes/): caught up, they hold only the
-- shapes that fit the worker, so shapes too big for it cost nothing here;
-- while more changes are left than one call takes in, it claims again.
if not catchUpClass(base, workerClass(view), stream, CATCH_UP_BUDGET) then return {CODE.indexing} end
local decision = decideClaim(view, stream, policy)
-- What the claim looked past goes (candidates/noteDrop): stale and invalid
-- staged index entries, shapes and groups without staged runs or written by
-- hand, holds on no staged run. Each was read from its key as the type it
-- is, so none of this can fail.
local reindex = {}
local jobsGone = false
for _, drop in ipairs(view.drops) do
  if drop.kind == "entry" then
    redis.call("ZREM", drop.key, drop.member)
    if drop.unhold then redis.call("HDEL", holdsKey, drop.member) end
    reindex[drop.shape] = true
    jobsGone = jobsGone or drop.gone
    if drop.gone then forgetStagedUserRun(base, drop.shape) end
  elseif drop.kind == "batch" then
    -- A run of a batch never committed: removed as if never staged.
    redis.call("ZREM", drop.key, drop.member)
    redis.call("HDEL", holdsKey, drop.member)
    dequeueJob(base, drop.member)
    removeRun(base, drop.member, "staged")
    batchRunGone(base, drop.batch)
    reindex[drop.shape] = true
  elseif drop.kind == "reindex" then
    reindex[drop.member] = true
  elseif drop.kind == "shape" then
    redis.call("ZREM", drop.key, drop.member)
    if drop.fitKey then redis.call("ZREM", drop.fitKey, drop.member) end
    if redis.call("ZCARD", drop.key) == 0 then
      redis.call("HDEL", groupsKey, drop.group)
      redis.call("DEL", KEY.groupUsers(base, drop.group))
    end
  elseif drop.kind == "park" then
    -- Its array is at its limit: out of this class's fit index until a run of the array ends (unparkArray).
    redis.call("ZREM", drop.fitKey, drop.member)
    for _, array in ipairs(drop.arrays) do
      if tryCall("SADD", KEY.arrayParked(base, array), drop.class .. "|" .. drop.member) == 1 then
        tryCall("HINCRBY", KEY.fitClass(base, drop.class), parkedField(), 1)
      end
    end
  elseif drop.kind == "group" then
    redis.call("HDEL", groupsKey, drop.member)
    redis.call("DEL", KEY.groupUsers(base, drop.member))
  else
    redis.call("HDEL", holdsKey, drop.member)
  end
  if drop.why then
    -- Written by hand, not by fitq: say so in Redis's log, on one line.
    local member = string.gsub(string.sub(drop.member, 1, 100), "[%c\128-\255]", "?")
    redis.log(redis.LOG_WARNING, "fitq claimRun dropped '" .. member .. "' (" .. #drop.member .. " bytes) from " ..
      (drop.key or (drop.kind == "group" and groupsKey or holdsKey)) .. ": " .. drop.why)
  end
end
for shape in pairs(reindex) do indexShape(base, shape) end
-- Runs whose jobs BullMQ deleted (drain, remove) leave the fit index here, before any
-- reconcile saw the index and BullMQ disagree: the next reconcile makes a full pass, which
-- forgets them (their ids, holds, dependents; reconcileRuns).
if jobsGone then redis.call("HSET", reconcileKey, "pass", "ids:") end
-- More are left than one call drops, or shapes went to their own group: workers claim again at once.
if view.drops.full or stream.moved then publish(base, {type = "staged", count = 0}) end
local chosen, head, placed, share = decision.chosen, decision.head, decision.placed, decision.share
local olderHold = view.olderHold
local devices = view.devices.shares

-- Record which run this worker holds, dropping the one it held before.
local holding = redis.call("HGET", workerKey, "holding")
local headId = head and head.id or ""
if holding and holding ~= headId and redis.call("HGET", holdsKey, holding) == name then
  redis.call("HDEL", holdsKey, holding)
end
if head and policy ~= "fifo" then
  redis.call("HSET", holdsKey, head.id, name)
  redis.call("HSET", workerKey, "holding", head.id)
  -- Workers holding newer runs no longer do: they may backfill now.
  if olderHold and holding ~= head.id then publish(base, {type = "holds", worker = name}) end
else
  redis.call("HDEL", workerKey, "holding")
end
-- Under fifo the blocked head holds nothing, but everything after it waits.
if head and policy == "fifo" and chosen == nil then
  redis.call("HSET", workerKey, "blockedBy", head.id)
else
  redis.call("HDEL", workerKey, "blockedBy")
end

if chosen == nil then
  -- Its preemptible runs of a lower priority make room for the head, if
  -- that is the only way it starts (includes/preemption/).
  local preempting, eligibleIn = {}, nil
  if head then preempting, eligibleIn = preemptFor(base, {reserved = workerReservedKey, workers = workersKey}, name, view, head, clock) end
  -- The worker claims again once a run may be preempted, as when a run's begin time comes.
  if eligibleIn and (nextBegin < 0 or eligibleIn < nextBegin) then nextBegin = eligibleIn end
  -- (Runs of an array at its limit wait too: they start once one of it ends.)
  if stream.seen or stream.throttled or view.drops.full or stream.moved then return {CODE.waiting, ignored, headId, nextBegin, preempting} end
  return {CODE.idle, ignored, "", nextBegin}
end

-- Its job goes active under a lock held with this registration's lease; what it demands is reserved.
local epoch = takeRun(base, {
  worker = workerKey, free = workerFreeKey, devices = workerDevicesKey, reserved = workerReservedKey, runs = workerRunsKey,
  holds = holdsKey, poolUsed = poolUsedKey,
}, name, token, {
  id = chosen.id, shape = chosen.shape, own = chosen.own, pooled = chosen.pooled, placed = placed, share = share,
  shares = devices, runLimit = chosen.runLimit, deadline = chosen.runLimit and clock + chosen.runLimit or nil,
}, clock, stream)
return {CODE.ok, chosen.id, epoch, redis.call("HGETALL", KEY.run(base, chosen.id)), redis.call("LLEN", KEY.runAttempts(base, chosen.id)) + 1}
