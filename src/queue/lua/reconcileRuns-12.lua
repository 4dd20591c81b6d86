#!lua
--[[
  Brings fitq's index of runs back in line with what BullMQ's API (or Bull
  Board) did to the namespace's queue, a bounded amount of work per call.
  Workers call it on every poll, `fitq runs` until it is done.

  1. Events. It reads the queue's event stream after the last entry it read
     (`events` in KEYS[2]) and looks at the job of each `added` and `removed`
     event, and of each `waiting` event from another state than active
     (retry, promote; see checkJob).
  2. A full pass, for what emits no event (changePriority, drain) or events
     that name no job (clean) or were lost (trimmed, or the stream deleted
     by obliterate): over every run id of `ids`, then every job of
     `prioritized`, looking at each (see checkJob). It starts when BullMQ's
     priority counter `pc` has moved (an add, retry, changePriority or
     promote by BullMQ: fitq never touches it), a `cleaned` event is read,
     events were lost, or the staged index and `prioritized` stop holding as
     many runs (checked on every call); `pass` in KEYS[2] is where it is.
  3. The jobs of the `wait` list, which fitq never uses: each is looked at
     on every call. (The `delayed` set, where fitq parks runs that begin
     later, is looked at by the full pass.)
  4. Upkeep of parked runs (see includes/placeStaged.lua): runs whose begin
     time has come join the fit index (as a claim does), and dependents of
     runs with many (`dependents-pending`) are judged, a batch per call.
  First of all, it looks at the jobs of the run ids it is given (ARGV[4..]):
  runs a reader found whose BullMQ data is not fitq's (job.updateData emits
  no event and moves no counter, so only reading the job shows it).

  Looking at a job (checkJob):
  - a fitq run whose `data` BullMQ rewrote (job.updateData), whatever its
    status: its `data` is put back from fitq's own copy, `runData`, which
    is what fitq runs, shows, indexes and verifies a signature against (so
    the change never took effect); then looked at as below;
  - its hash is gone (job.remove, clean, drain, obliterate): fitq forgets
    the run: its id, staged index entries, hold, output and state entries;
  - it is not a fitq run (not in `ids`, or without fitq's run data: added by
    plain BullMQ) and waits (prioritized, wait, delayed): it ends `rejected`
    ("not a fitq run (added without fitq's run data)"), as a failed job,
    and is listed by fitq (added to `ids`) when its id is one fitq accepts;
    it never runs;
  - a run that ended but has no `finishedOn` (BullMQ retried it: job.retry,
    retryJobs): staged again at its place in the order, with its demands,
    as a new attempt (`restaged` reset, `retried` + 1), its packed output
    a stream again, with a `restaged` entry; workers are told;
  - a parked staged run (held, waiting for its begin time or its
    dependencies): put back where it belongs (placeStaged), never in the
    fit index while it may not start; one BullMQ promoted (job.promote:
    moved from `delayed` to `prioritized`) begins now;
  - a staged run whose BullMQ priority is not the one its order says
    (changePriority), or that is missing from `prioritized` or its staged
    index, or is in `wait`: an unsigned run takes the new priority (fitq's
    priority = 1,000,001 - BullMQ's; BullMQ's 0, "no priority", is fitq's
    default 0; below -1,000,000 is -1,000,000), its data, opts, score and
    index entries rewritten; a signed run keeps its signed priority (its
    BullMQ priority and score are restored). It goes back to `prioritized`.

  KEYS[1] ids                zset of every run id
  KEYS[2] reconcile          hash: events, pc, mismatch, pass
  KEYS[3] runs:events        stream: the queue's events
  KEYS[4] runs:prioritized   zset: staged jobs, score = order
  KEYS[5] runs:wait          list: BullMQ's waiting jobs (fitq never uses it)
  KEYS[6] runs:delayed       zset: BullMQ's delayed jobs (fitq never uses it)
  KEYS[7] runs:pc            string: BullMQ's priority counter
  KEYS[8] runs:completed     zset: completed jobs, score = finishedOn
  KEYS[9] runs:failed        zset: failed jobs, score = finishedOn
  KEYS[10] groups            hash: group of shapes with staged runs -> version
  KEYS[11] holds             hash: held run id -> worker holding it
  KEYS[12] seq               counter of staged runs (staging order)

  ARGV[1] base, ARGV[2] budget (jobs and events looked at per call, about),
  ARGV[3] logMaxLines, ARGV[4..] run ids to look at first

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
-- @include isEnded
-- @include serverNow
-- @include allShapes
-- @include indexShape
-- @include jobKey
-- @include liveClaim
-- @include bullPriority
-- @include orderScore
-- @include finishJob
-- @include deleteJob
-- @include publish
-- @include forgetIfEmpty
-- @include trimEndedRuns
-- @include tryCall
-- @include validName
-- @include validShape
-- @include unpackLog
-- @include placeStaged
-- @include promoteDueRuns
-- @include settlePendingDependents
-- @include tallyState
-- @include tallyArrayRun
-- @include restoreArrayLimit
-- @include runDataText
local idsKey = KEYS[1]
local stateKey = KEYS[2]
local eventsKey = KEYS[3]
local prioritizedKey = KEYS[4]
local waitKey = KEYS[5]
local delayedKey = KEYS[6]
local pcKey = KEYS[7]
local completedKey = KEYS[8]
local failedKey = KEYS[9]
-- (allShapes reads it, indexShape keeps it.)
local groupsKey = KEYS[10]
local holdsKey = KEYS[11]
local seqKey = KEYS[12]
local base, budget, logMaxLines = ARGV[1], tonumber(ARGV[2]), ARGV[3]

if redis.call("EXISTS", idsKey, eventsKey, prioritizedKey, waitKey, delayedKey) == 0 then return {0, {}} end

local FOREIGN_REASON = "not a fitq run (added without fitq's run data)"
-- BullMQ's own key names: never a run id (see QUEUE_KEY_NAMES in names.ts).
local QUEUE_KEY_NAMES = {}
for _, suffix in ipairs({"active", "wait", "waiting-children", "paused", "id", "delayed", "prioritized",
    "stalled-check", "completed", "failed", "stalled", "repeat", "limiter", "meta", "events", "pc", "marker", "de"}) do
  QUEUE_KEY_NAMES[suffix] = true
end
local PRIORITY_MIN = -1000000

local actions = {}
local work = budget
local forgotten = 0

local function act(kind, runId, detail)
  actions[#actions + 1] = kind .. "|" .. runId .. "|" .. (detail or "")
end

-- Whether fitq accepts this id as a run id (names.ts: validateNewRunId).
local function isRunId(id)
  return validName(id) and not QUEUE_KEY_NAMES[id]
end

local function decodeJson(text)
  local ok, value = pcall(cjson.decode, text or "")
  if ok and type(value) == "table" then return value end
  return nil
end

-- A run whose job is gone: its id, staged index entries, hold, output and
-- whatever is left of its job; the runs depending on it are judged (a
-- dependency removed can never be met).
local function forget(runId)
  if redis.call("SCARD", base .. "dependents:" .. runId) > 0 then
    redis.call("HSET", base .. "dependents-pending", runId, "0")
  end
  redis.call("ZREM", idsKey, runId)
  for _, shape in ipairs(allShapes(base)) do
    -- (A key written by hand that is no sorted set is left alone.)
    if tryCall("ZREM", base .. "staged:" .. shape, runId) == 1 then indexShape(base, shape) end
  end
  redis.call("HDEL", holdsKey, runId)
  deleteJob(base, runId)
  redis.call("ZREM", delayedKey, runId)
  redis.call("ZREM", base .. "runs:waiting-children", runId)
  forgotten = forgotten + 1
  act("forgotten", runId)
end

-- Takes a job out of every waiting state; returns the one it was in, if any.
local function unqueue(runId)
  if redis.call("ZREM", prioritizedKey, runId) == 1 then return "waiting" end
  if redis.call("LREM", waitKey, 0, runId) > 0 then return "waiting" end
  if redis.call("ZREM", delayedKey, runId) == 1 then return "delayed" end
  return nil
end

-- A waiting job that is not a fitq run: it ends rejected, never runs.
local function rejectForeign(runId, known)
  local prev = unqueue(runId)
  if not prev then return end
  local key = jobKey(base, runId)
  if isRunId(runId) then
    if not known then redis.call("ZADD", idsKey, 0, runId) end
    if not redis.call("HGET", key, "seq") then redis.call("HSET", key, "seq", redis.call("INCR", seqKey)) end
  end
  redis.call("HSET", key, "status", "rejected", "reason", FOREIGN_REASON)
  finishJob(base, runId, "rejected", "null", FOREIGN_REASON, serverNow(), prev)
  publish(base, {type = "ended", runId = runId, status = "rejected"})
  act("rejected", runId)
  trimEndedRuns(base, "failed", RETENTION_BATCH, runId)
end

-- A staged run: back in `prioritized` and its staged index at its score,
-- with the priority BullMQ was given if it is unsigned, else its own.
local function checkOrder(runId)
  local key = jobKey(base, runId)
  local job = redis.call("HMGET", key, "shape", "score", "priority", "seq", "opts", "worker")
  local shape, score = job[1], tonumber(job[2])
  -- A shape or index written by hand is left for the claim to drop, and a
  -- running run put back as staged by hand is not staged again.
  local stagedKey = base .. "staged:" .. shape
  if not score or not validShape(shape) or liveClaim(base, runId, job[6]) then return end
  local indexed = tryCall("ZSCORE", stagedKey, runId)
  if indexed == nil then return end
  local bull = math.floor(score / 4294967296)
  local given = tonumber(job[3])
  local inWait = redis.call("LREM", waitKey, 0, runId) > 0
  if given ~= bull then
    local data = decodeJson(runDataText(key))
    if data and data.signature == nil then
      -- Unsigned: the new priority is fitq's too.
      local priority = 0
      if given and given > 0 then priority = math.max(PRIORITY_MIN, PRIORITY_BASE - given) end
      data.priority = priority
      local opts = decodeJson(job[5]) or {}
      opts.priority = bullPriority(priority)
      score = tonumber(orderScore(priority, job[4]))
      local text = cjson.encode(data)
      redis.call("HSET", key, "priority", bullPriority(priority), "score", string.format("%.0f", score),
        "data", text, "runData", text, "opts", cjson.encode(opts))
      act("priority", runId, tostring(priority))
    else
      -- Signed (or unreadable): its priority is part of what was signed.
      redis.call("HSET", key, "priority", bull)
      act("priorityKept", runId, tostring(PRIORITY_BASE - bull))
    end
  end
  local scoreText = string.format("%.0f", score)
  if inWait or tonumber(redis.call("ZSCORE", prioritizedKey, runId) or "") ~= score then
    redis.call("ZADD", prioritizedKey, scoreText, runId)
  end
  if tonumber(indexed or "") ~= score then
    redis.call("ZADD", stagedKey, scoreText, runId)
    indexShape(base, shape)
  end
end

-- An ended run BullMQ retried: staged again, as a new attempt.
local function restageRetried(runId, status)
  local key = jobKey(base, runId)
  redis.call("ZREM", completedKey, runId)
  redis.call("ZREM", failedKey, runId)
  redis.call("HDEL", key, "worker", "pb", "devices", "deviceShare", "reserved", "pooled", "cancelRequested",
    "exitCode", "signal", "reason", "returnvalue", "failedReason", "finishedOn", "processedOn",
    "restaged", "restagedReason")
  redis.call("HSET", key, "status", "staged")
  redis.call("HINCRBY", key, "retried", 1)
  -- Open again in its array's tally: the runs waiting for the array are judged again.
  local arrayCause = tallyArrayRun(base, runId, tallyState(status), "open")
  if arrayCause then redis.call("HSET", base .. "dependents-pending", arrayCause, "0") end
  restoreArrayLimit(base, runId)
  local reason = "retried from BullMQ (it was " .. status .. ")"
  unpackLog(base, runId, logMaxLines)
  redis.call("XADD", key .. ":output", "MAXLEN", "~", logMaxLines, "*", "event", "restaged", "reason", reason)
  checkOrder(runId)
  publish(base, {type = "staged", count = 1})
  act("retried", runId, status)
end

-- A parked staged run (see placeStaged): where it belongs. BullMQ's
-- promote moved it from delayed to prioritized: it begins now.
local function checkParked(runId, beginAt, blocked)
  local key = jobKey(base, runId)
  if beginAt and not blocked and redis.call("ZSCORE", delayedKey, runId) == false and
      (redis.call("ZSCORE", prioritizedKey, runId) ~= false or redis.call("LPOS", waitKey, runId) ~= false) then
    redis.call("HDEL", key, "beginAt")
    act("promoted", runId)
  end
  redis.call("LREM", waitKey, 0, runId)
  if placeStaged(base, runId, serverNow()) == "staged" then publish(base, {type = "staged", count = 1}) end
end

local function checkJob(runId)
  work = work - 1
  local key = jobKey(base, runId)
  local known = redis.call("ZSCORE", idsKey, runId) ~= false
  if redis.call("EXISTS", key) == 0 then
    if known then forget(runId) else unqueue(runId) end
    return
  end
  -- A key that holds no hash is no job: not fitq's to look at.
  local job = tryCall("HMGET", key, "status", "shape", "finishedOn", "held", "beginAt", "waitDeps", "data", "runData")
  if not job then return end
  local status = job[1]
  if not known or not status or not job[2] then return rejectForeign(runId, known) end
  -- BullMQ rewrote what the run is (job.updateData): fitq's copy goes back.
  if job[8] and job[7] ~= job[8] then
    redis.call("HSET", key, "data", job[8])
    act("dataKept", runId, status)
  end
  if status == "staged" and (job[4] or job[5] or job[6]) then return checkParked(runId, job[5], job[4] or job[6]) end
  if status == "staged" then return checkOrder(runId) end
  if isEnded(status) and not job[3] then return restageRetried(runId, status) end
end

-- 0. The runs a reader found whose BullMQ data is not fitq's.
for i = 4, #ARGV do
  if validName(ARGV[i]) then checkJob(ARGV[i]) end
end

local state = redis.call("HMGET", stateKey, "events", "pc", "mismatch", "pass")
-- (A missing field is false, not nil.)
local cursor, pass = state[1] or nil, state[4] or nil
local startPass = false
local more = false

-- 1. Events.
if cursor and #redis.call("XRANGE", eventsKey, cursor, cursor) == 0 then
  -- Events were lost (trimmed, or the stream deleted): the pass looks at everything.
  startPass = true
  local last = redis.call("XREVRANGE", eventsKey, "+", "-", "COUNT", 1)[1]
  cursor = last and last[1] or nil
else
  local entries = redis.call("XRANGE", eventsKey, cursor and ("(" .. cursor) or "-", "+", "COUNT", budget)
  for _, entry in ipairs(entries) do
    cursor = entry[1]
    local fields = entry[2]
    local event, jobId, prev
    for i = 1, #fields, 2 do
      local name = fields[i]
      if name == "event" then event = fields[i + 1] elseif name == "jobId" then jobId = fields[i + 1]
      elseif name == "prev" then prev = fields[i + 1] end
    end
    -- A `waiting` without `prev` follows an `added` of the same job; after
    -- `active` it is fitq's own re-staging.
    if jobId and (event == "added" or event == "removed" or (event == "waiting" and prev and prev ~= "active")) then
      checkJob(jobId)
    elseif event == "cleaned" then
      startPass = true
    else
      work = work - 0.1
    end
  end
  more = #entries == budget
end
if cursor ~= (state[1] or nil) then
  if cursor then redis.call("HSET", stateKey, "events", cursor) else redis.call("HDEL", stateKey, "events") end
end

-- 2. What starts a full pass.
local pc = redis.call("GET", pcKey) or ""
if pc ~= (state[2] or "") then
  startPass = true
  if pc == "" then redis.call("HDEL", stateKey, "pc") else redis.call("HSET", stateKey, "pc", pc) end
end
local stagedCount = 0
for _, shape in ipairs(allShapes(base)) do
  stagedCount = stagedCount + (tryCall("ZCARD", base .. "staged:" .. shape) or 0)
end
local prioritizedCount = redis.call("ZCARD", prioritizedKey)
if stagedCount ~= prioritizedCount then
  local mismatch = stagedCount .. ":" .. prioritizedCount
  if mismatch ~= state[3] then
    startPass = true
    redis.call("HSET", stateKey, "mismatch", mismatch)
  end
elseif state[3] then
  redis.call("HDEL", stateKey, "mismatch")
end

-- 3. The wait list (at least one job per call).
for _, runId in ipairs(redis.call("LRANGE", waitKey, 0, math.max(math.floor(work), 1) - 1)) do checkJob(runId) end

-- 4. The full pass, where it was (or from the start).
if startPass then pass = "ids:" end
while pass and work > 0 do
  local phase, position = string.match(pass, "^(%a+):(.*)$")
  local limit = math.ceil(work)
  if phase == "ids" then
    local ids = redis.call("ZRANGE", idsKey, position == "" and "-" or ("(" .. position), "+", "BYLEX", "LIMIT", 0, limit)
    for _, runId in ipairs(ids) do
      checkJob(runId)
      position = runId
    end
    pass = #ids < limit and "prioritized:0" or ("ids:" .. position)
  elseif phase == "prioritized" then
    local rank = tonumber(position) or 0
    local ids = redis.call("ZRANGE", prioritizedKey, rank, rank + limit - 1)
    for _, runId in ipairs(ids) do checkJob(runId) end
    if #ids < limit then pass = "delayed:0" else pass = "prioritized:" .. (rank + #ids) end
  elseif phase == "delayed" then
    local rank = tonumber(position) or 0
    local ids = redis.call("ZRANGE", delayedKey, rank, rank + limit - 1)
    for _, runId in ipairs(ids) do checkJob(runId) end
    if #ids < limit then pass = nil else pass = "delayed:" .. (rank + #ids) end
  else
    pass = nil
  end
end
if pass ~= (state[4] or nil) then
  if pass then redis.call("HSET", stateKey, "pass", pass) else redis.call("HDEL", stateKey, "pass") end
end

-- 5. Parked runs: those due join the index; dependents still to be judged.
local now = serverNow()
local promoted = promoteDueRuns(base, now, 100)
if promoted > 0 then publish(base, {type = "staged", count = promoted}) end
if redis.call("EXISTS", base .. "dependents-pending") == 1 then
  if settlePendingDependents(base, now, logMaxLines, math.max(math.floor(work), 100)) then more = true end
end

if forgotten > 0 then forgetIfEmpty(base) end
return {(more or pass) and 1 or 0, actions}
