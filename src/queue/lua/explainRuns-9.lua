#!lua flags=no-writes
--[[
  Says why staged runs wait: for each run, what every live worker's next
  claim would do with it, judged by the claim's own policy (the candidates,
  the walk and device placement of includes/candidates/, includes/policy/ and
  includes/devices/, which claimRun acts on). Writes nothing.

  For a run R on worker W the claim's walk is made over W's candidates older
  than R (R's own shape included, if an older run of it is first), then R,
  as W's next claim would make it; a candidate that could start now is
  passed over (W would start it, then claim again), one that cannot may
  block R (fifo) or become W's blocked head (backfill). Runs of the same
  shape between the same candidates and holds get the same verdict, so the
  walk is made once per such group: the cost grows with the number of
  shapes and workers, not of runs.

  KEYS[1]  workers        zset: worker name -> lease deadline
  KEYS[2]  holds          hash: held run id -> worker holding it
  KEYS[3]  pool:capacity  hash: cluster-wide resource -> total amount
  KEYS[4]  pool:used      hash: cluster-wide resource -> amount reserved
  KEYS[5..7] what its includes touch, each named at its top: groups,
  KEYS[8] fair-share    hash: fair share's settings (includes/fairshare/, accrueUsage)
  KEYS[9] fair-usage    hash: user -> decayed usage (includes/fairshare/)
  batches, runs:meta
  (and, per live worker, worker:<name> with :capacity, :free, :devices,
  :gpus and :reserved; per run, its job hash; the staged index: groups, group:<names>,
  staged:<shape>)

  ARGV[1] base
  ARGV[2] n, then n run ids (staged runs; any other is not explained)
  then m, then m shapes ("a=1,b=2" or "none", with ";gpus=0,1" for a pinned
  run): runs about to be staged, judged as if staged after every staged run

  Returns {paused, verdicts, runVerdicts}: paused is 1 when the namespace's
  queue is paused (the verdicts say what would happen once it is resumed);
  runVerdicts gives, for each run id and then each shape, its verdict's
  index in verdicts (from 1; 0 for a run that is not staged). A verdict is a
  flat list of facts, each a tag, a count n and n strings:
    noWorker                       no live worker (that is not drained)
    drained name...                the live workers that are drained (fitq drain): they
                                   claim nothing, so no verdict is given for them
    own name...                    what the run demands of a worker (not of the pool)
    pins id...                     the GPU devices it is pinned to
    poolOver name need capacity    it needs more of a pool resource than the pool has
    poolShort name need free capacity   more than the pool has free now
    quota owner name need used limit   starting it would take its user (or its
                                   project, owner `project=<name>`) past their quota
                                   (includes/quotas/runQuotaShort.lua): name is
                                   "running" (runs at once) or a resource
    worker name                    the facts after it are about this live worker:
      missing name...              resources it does not have (nor the pool)
      noDevice id...               pinned devices it does not have
      over name need capacity      more than its total capacity
      unplaceable gpu              a gpu demand its devices can never take
      mig n                        the worker has n MIG devices (with unplaceable:
                                   a whole gpu above 1 cannot go on them)
      gpuUnusable id state why     a device its GPU probe finds unusable now
                                   (state busy, lost or stale; why: in words), one
                                   fact each, for a run with a gpu demand; with
      gpuWait                      ...the run cannot start on the devices left
                                   even once its runs end: it waits for these
      gpumem need id free total    its gpumem demand, and the device (usable, or
                                   pinned) with the most memory free for it
      gpumemOver need total        a gpumem demand above every device's total
                                   memory (total: the largest)
      overLimit limit max          its time limit (ms) is above the worker's maximum
      slots running concurrency    it runs its maximum
      fifo runId                   an older run blocks it (policy fifo)
      fair user runUser used usedOf   runs of another user (user), staged after it, come
                                   first by fair share (includes/fairshare/): used and
                                   usedOf are how much of their share runUser and user
                                   have used (1: all of it)
      starts id...                 it would start the run now (on these devices)
      backfills runId in           ...only because it ends before its blocked head runId
                                   can start (in `in` ms)
      next                         the run would be its blocked head (it holds it)
      short name need free         more than it has free
      devices                      the devices the run needs are not free
      held runId name need free    its blocked head runId needs `need` of the `free` (by amount)
      heldDevices runId kind gpu id...   its blocked head holds the devices: kind
                                   "pinned" (the head's devices, id...), "unplaceable"
                                   (the head cannot be placed now) or "eaten" (the run
                                   would take what the head needs); gpu: the head's gpu
      poolHeld runId worker name need free capacity   the pool share the run
                                   runId (held by worker) waits for
      headShort name need free     what the blocked run of `held`, `heldDevices`
                                   or `poolHeld` itself lacks on the worker
                                   holding it, so that it cannot start: more
                                   than that worker has free
      headPoolShort name need free      ...more than the pool has free
      headPoolHeld runId name need free ...the pool share an older run held
                                   elsewhere (runId) keeps
      headDevices                  ...the GPU devices it needs are not free
      shadow runId in limit        the blocked head runId can start in `in` ms at the
                                   earliest ("" unknown: a running run has no time
                                   limit); the run's time limit on the worker
                                   (ms; "" none) does not end before then
  Amounts are exact decimals ("0.5", "8000000000").

  Flags: no-writes: it only reads, so it runs while Redis is out of memory
  and on a read-only replica.
]]
-- @include candidates/buildCandidates
-- @include amounts/compareAmounts
-- @include candidates/fitsTotal
-- @include amounts/formatAmount
-- @include devices/gpuDemand
-- @include devices/memoryDemand
-- @include policy/holdIfFirst
-- @include workers/liveWorker
-- @include policy/newWalk
-- @include devices/pinsNotDevices
-- @include devices/placeable
-- @include bullmq/queuePaused
-- @include lifecycle/readRun
-- @include candidates/readClaimView
-- @include candidates/readPool
-- @include namespace/serverNow
-- @include policy/shadowTime
-- @include candidates/shapeDemand
-- @include candidates/splitDemand
-- @include shape/parseShape
-- @include policy/startsNow
-- @include namespace/tryCall
-- @include namespace/validName
-- @include policy/whyNotNow
-- @include quotas/runQuotaShort
-- @include fairshare/fairKey
-- @include fairshare/fairOrder
-- @include fairshare/usedOfShare
-- @include shape/shapeUser
local workersKey = KEYS[1]
local holdsKey = KEYS[2]
local poolCapacityKey = KEYS[3]
local poolUsedKey = KEYS[4]
-- (Touched by its includes.)
local groupsKey = KEYS[5]
local batchesKey = KEYS[6]
local queueMetaKey = KEYS[7]
local fairShareKey = KEYS[8]
local fairUsageKey = KEYS[9]
local base = ARGV[1]
local idCount = tonumber(ARGV[2])
local shapeCount = tonumber(ARGV[3 + idCount])

local clock = serverNow()
local pool = readPool(poolCapacityKey, poolUsedKey)
local paused = queuePaused(base)
local fair = fairOrder(base, clock)
pool.fair = fair
-- The place of a staged run in the claim's order (fairshare/fairKey).
local function keyOf(score, shape)
  local _, user = shapeUser(shape or "none")
  return fairKey(fair, score, user)
end
-- Candidates after every run explained change no verdict (shapes about to be staged come after them all).
local newestExplained = keyOf(shapeCount > 0 and math.huge or -math.huge)
for i = 1, idCount do
  local run = tryCall("HMGET", KEY.run(base, ARGV[2 + i]), "score", "shape") or {}
  local score = tonumber(run[1] or "")
  local key = score and keyOf(score, run[2] or nil)
  if key and key > newestExplained then newestExplained = key end
end

-- The live workers, in the order of the workers zset, each with its view,
-- candidates and claim settings; and every score the verdict of a run may
-- turn on (its candidates', the holds'), sorted.
local workers = {}
local drainedWorkers = {}
local breakpoints = {}
for _, name in ipairs(redis.call("ZRANGE", workersKey, 0, -1)) do
  local workerKey = KEY.worker(base, name)
  -- (A member written by hand, no worker name or no hash, is no worker.)
  local info = validName(name) and tryCall("HMGET", workerKey, "token", "policy", "gpuPlacement", "concurrency", "running",
    "defaultTimeLimit", "maxTimeLimit", "drained", "gpuProbe", "mig")
  if info and info[1] and info[8] and liveWorker(workersKey, name, clock) then
    drainedWorkers[#drainedWorkers + 1] = name
  elseif info and info[1] and liveWorker(workersKey, name, clock) then
    local view = readClaimView(base, name, {
      capacity = KEY.workerCapacity(base, name), free = KEY.workerFree(base, name), devices = KEY.workerDevices(base, name),
      reserved = KEY.workerReserved(base, name), workers = workersKey, holds = holdsKey,
      gpus = KEY.workerGpus(base, name), gpuStaleMs = tonumber(info[9] or ""), mig = info[10] or nil,
    }, clock, info[3] == "spread", pool, {default = tonumber(info[6] or ""), max = tonumber(info[7] or "")})
    local candidates = buildCandidates(view, newestExplained)
    workers[#workers + 1] = {
      name = name, view = view, candidates = candidates, policy = info[2] == "fifo" and "fifo" or "backfill",
      maxRuns = tonumber(info[4] or "0") or 0, running = tonumber(info[5] or "0") or 0,
    }
    for _, candidate in ipairs(candidates) do breakpoints[#breakpoints + 1] = candidate.key end
    if view.olderHold then breakpoints[#breakpoints + 1] = view.olderHold.key end
  end
end
table.sort(breakpoints)
local workerByName = {}
for _, w in ipairs(workers) do workerByName[w.name] = w end

-- How many breakpoints lie below a key, and whether it is one.
local function position(key)
  local low, high = 1, #breakpoints + 1
  while low < high do
    local middle = math.floor((low + high) / 2)
    if breakpoints[middle] < key then low = middle + 1 else high = middle end
  end
  return low - 1, breakpoints[low] == key
end

-- Appends a fact: its tag, how many strings follow, and them.
local function fact(out, tag, args)
  out[#out + 1] = tag
  out[#out + 1] = #args
  for _, arg in ipairs(args) do out[#out + 1] = arg end
end

local function ids(list)
  local copy = {}
  for _, id in ipairs(list) do copy[#copy + 1] = id end
  return copy
end

-- What a blocked run (head) lacks, so that it cannot start, on the worker w
-- holding it: judged as w's walk judged it when it became w's head (nothing
-- held yet).
local function headLacks(out, w, head)
  local lacks = whyNotNow(newWalk(w.view, w.policy), head)
  for _, item in ipairs(lacks.short) do
    fact(out, "headShort", {item[1], formatAmount(item[2]), formatAmount(item[3])})
  end
  for _, item in ipairs(lacks.poolShort) do
    fact(out, "headPoolShort", {item[1], formatAmount(item[2]), formatAmount(item[3])})
  end
  for _, item in ipairs(lacks.poolHeld) do
    fact(out, "headPoolHeld", {lacks.poolHolder, item[1], formatAmount(item[2]), formatAmount(item[3])})
  end
  if lacks.devices or lacks.heldDevices then fact(out, "headDevices", {}) end
end

-- What worker w's next claim would do with a run of this shape, score and
-- key (its place in the claim's order).
local function explainOnWorker(out, w, shape, parsed, score, key)
  local view = w.view
  fact(out, "worker", {w.name})
  local wanted = shapeDemand(view, shape, parsed)
  if #wanted.missing > 0 then
    fact(out, "missing", wanted.missing)
    return
  end
  local notDevices = gpuDemand(wanted.own) and pinsNotDevices(view.devices, wanted.pinned) or {}
  if #notDevices > 0 then
    fact(out, "noDevice", notDevices)
  else
    local gpuOver = false
    for _, item in ipairs(wanted.own) do
      if compareAmounts(item[2], view.capacity[item[1]]) > 0 then
        fact(out, "over", {item[1], formatAmount(item[2]), formatAmount(view.capacity[item[1]])})
        if item[1] == "gpu" then gpuOver = true end
      end
    end
    if not gpuOver and not placeable(view.devices, wanted.own, wanted.pinned) then
      fact(out, "unplaceable", {formatAmount(gpuDemand(wanted.own))})
      local migCount = 0
      for _ in pairs(view.devices.migs) do migCount = migCount + 1 end
      if migCount > 0 then fact(out, "mig", {tostring(migCount)}) end
    end
  end
  if wanted.overLimit then fact(out, "overLimit", {tostring(wanted.limit), tostring(view.limits.max)}) end
  -- Devices its probe finds unusable (a pinned run: only its own), and whether the run waits for them.
  if gpuDemand(wanted.own) then
    local pinnedTo = {}
    for _, id in ipairs(wanted.pinned) do pinnedTo[id] = true end
    for _, id in ipairs(view.devices.ids) do
      local unusable = view.devices.unusable[id]
      if unusable and (#wanted.pinned == 0 or pinnedTo[id]) then fact(out, "gpuUnusable", {id, unusable.state, unusable.why}) end
    end
    if placeable(view.devices, wanted.own, wanted.pinned) and not placeable(view.devices, wanted.own, wanted.pinned, true) then
      fact(out, "gpuWait", {})
    end
    local memory = memoryDemand(wanted.own)
    if memory and view.devices.memory then
      local best, largest
      for _, id in ipairs(view.devices.ids) do
        local device = view.devices.memory[id]
        if device and (#wanted.pinned == 0 or pinnedTo[id]) then
          if largest == nil or compareAmounts(device.total, largest) > 0 then largest = device.total end
          if not view.devices.unusable[id] and (best == nil or compareAmounts(device.free, view.devices.memory[best].free) > 0) then best = id end
        end
      end
      if largest and compareAmounts(memory, largest) > 0 then
        fact(out, "gpumemOver", {formatAmount(memory), formatAmount(largest)})
      elseif best then
        local device = view.devices.memory[best]
        fact(out, "gpumem", {formatAmount(memory), best, formatAmount(device.free), formatAmount(device.total)})
      end
    end
  end
  if not fitsTotal(view, wanted) then return end
  if w.maxRuns > 0 and w.running >= w.maxRuns then
    fact(out, "slots", {tostring(w.running), tostring(w.maxRuns)})
    return
  end
  local walk = newWalk(view, w.policy)
  local fairAhead
  for _, candidate in ipairs(w.candidates) do
    if candidate.key >= key then break end
    -- Ahead of it by fair share alone: another user's, of its priority, staged after it.
    if candidate.score > score and parsed.user and candidate.user ~= parsed.user then fairAhead = fairAhead or candidate.user end
    if not startsNow(walk, candidate) then
      if walk.fifo then
        fact(out, "fifo", {candidate.id})
        return
      end
      holdIfFirst(walk, candidate)
    end
  end
  wanted.score, wanted.key = score, key
  local placed, _, byTime = startsNow(walk, wanted)
  if placed then
    fact(out, "starts", ids(placed))
    if byTime then fact(out, "backfills", {walk.head.id, tostring(shadowTime(walk) - view.clock)}) end
    return
  end
  if fairAhead then
    fact(out, "fair", {fairAhead, parsed.user, string.format("%.2f", usedOfShare(fair, parsed.user, {fairAhead})),
      string.format("%.2f", usedOfShare(fair, fairAhead, {parsed.user}))})
  end
  local why = whyNotNow(walk, wanted)
  if not walk.fifo and holdIfFirst(walk, wanted) then fact(out, "next", {}) end
  for _, item in ipairs(why.short) do
    fact(out, "short", {item[1], formatAmount(item[2]), formatAmount(item[3])})
  end
  if why.devices then fact(out, "devices", {}) end
  for _, item in ipairs(why.held) do
    fact(out, "held", {walk.head.id, item[1], formatAmount(item[2]), formatAmount(item[3])})
  end
  if why.heldDevices then
    local args = {walk.head.id, why.heldDevices, formatAmount(gpuDemand(walk.head.own))}
    for _, id in ipairs(walk.head.pinned) do args[#args + 1] = id end
    fact(out, "heldDevices", args)
  end
  if walk.head and not walk.fifo and (#why.held > 0 or why.heldDevices) then
    local shadow = shadowTime(walk)
    fact(out, "shadow", {walk.head.id, shadow and tostring(shadow - view.clock) or "", wanted.runLimit and tostring(wanted.runLimit) or ""})
  end
  for _, item in ipairs(why.poolHeld) do
    fact(out, "poolHeld", {why.poolHolder, why.poolHolderWorker, item[1], formatAmount(item[2]), formatAmount(item[3]),
      formatAmount(pool.capacity[item[1]])})
  end
  -- Held for a blocked run: what that run itself lacks, on its worker.
  if walk.head and not walk.fifo and (#why.held > 0 or why.heldDevices or (#why.poolHeld > 0 and walk.heldPool)) then
    headLacks(out, w, walk.head)
  elseif #why.poolHeld > 0 then
    local holder = workerByName[why.poolHolderWorker]
    for _, candidate in ipairs(holder and holder.candidates or {}) do
      if candidate.id == why.poolHolder then headLacks(out, holder, candidate) end
    end
  end
end

-- The verdict on a run of this shape and score (math.huge: after every staged run).
local function explainRun(shape, score)
  local key = keyOf(score, shape)
  local out = {}
  if #workers == 0 then fact(out, "noWorker", {}) end
  if #drainedWorkers > 0 then fact(out, "drained", drainedWorkers) end
  -- (A run's shape written by hand is judged as demanding nothing; the claim drops its runs.)
  local parsed = parseShape(shape) or parseShape("none")
  local own, pooled = splitDemand(pool, parsed.demand)
  local names = {}
  for _, item in ipairs(own) do names[#names + 1] = item[1] end
  fact(out, "own", names)
  fact(out, "pins", parsed.pinned)
  for _, item in ipairs(pooled) do
    local capacity, free = pool.capacity[item[1]], pool.free[item[1]]
    if compareAmounts(item[2], capacity) > 0 then
      fact(out, "poolOver", {item[1], formatAmount(item[2]), formatAmount(capacity)})
    end
    if compareAmounts(item[2], free) > 0 then
      fact(out, "poolShort", {item[1], formatAmount(item[2]), formatAmount(free), formatAmount(capacity)})
    end
  end
  local short = runQuotaShort(base, pool.quotas, parsed)
  if short then fact(out, "quota", {short.owner, short.name, short.need, short.used, short.limit}) end
  for _, w in ipairs(workers) do explainOnWorker(out, w, shape, parsed, score, key) end
  return out
end

local verdicts, byGroup, runVerdicts = {}, {}, {}
local function verdictIndex(group, shape, score)
  local index = byGroup[group]
  if index == nil then
    verdicts[#verdicts + 1] = explainRun(shape, score)
    index = #verdicts
    byGroup[group] = index
  end
  return index
end

for i = 1, idCount do
  local run = readRun(base, ARGV[2 + i], "status", "shape", "score") or {}
  local score = tonumber(run[3] or "")
  if run[1] == "staged" and score then
    local shape = run[2] or "none"
    local below, onBreakpoint = position(keyOf(score, shape))
    local group = shape .. "|" .. below .. "|" .. (onBreakpoint and run[3] or "")
    runVerdicts[#runVerdicts + 1] = verdictIndex(group, shape, score)
  else
    runVerdicts[#runVerdicts + 1] = 0
  end
end
for i = 1, shapeCount do
  local shape = ARGV[3 + idCount + i]
  runVerdicts[#runVerdicts + 1] = verdictIndex(shape .. "|after", shape, math.huge)
end

return {paused and 1 or 0, verdicts, runVerdicts}
