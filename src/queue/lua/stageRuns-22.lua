#!lua
--[[
  Stages a batch of runs, all or nothing: each becomes a job of the
  namespace's BullMQ queue (job id = run id, state prioritized) and enters
  the staged index of its demand shape.

  KEYS[1]  seq         counter of staged runs (staging order)
  KEYS[2]  ids         zset of every run id, score 0 (looked up by prefix)
  KEYS[3]  groups      hash: group of shapes with staged runs -> version
  KEYS[4]  batches     hash: open batch id -> "deadline count"
  KEYS[5..22] what its includes touch, each named at its top: arrays,
  arrays:tally, holds, pool:capacity, pool:used, settings, stats,
  dependents-pending, runs, runs:wait, runs:active, runs:prioritized,
  runs:delayed, runs:waiting-children, runs:completed, runs:failed,
  runs:events, runs:meta

  ARGV[1] base     key prefix, e.g. "fitq:{default}:"
  ARGV[2] batch    "" (the runs are the whole batch: they are there for
                   every reader at once), or the id of a batch sent in
                   chunks, one call each: its runs carry it (their job's
                   `batch` field) and fitq's readers treat them as not
                   there until commitBatch; the batch is open in `batches`
                   until its deadline, this call's time plus ARGV[3] ms
  ARGV[3] ttl      ms (with a batch)
  ARGV[4] first    "1" for a batch's first chunk (which opens it); a later
                   chunk of a batch no longer open is refused
  ARGV[5] user     who stages them (their job's `user` field), or ""
  ARGV[6] host     the host they are staged from (`stagedFrom`), or ""
  ARGV[7] total    number of runs of the whole stage (all chunks of a batch)
  ARGV[8] count    number of runs; then, for each run, 6 arguments:
          id, shape ("a=1,b=2", "none", pinned: "gpu=1;gpus=0"), priority (integer),
          data (the job data: JSON text of what the run is),
          array (the id of the array the run is part of, or ""; its job's
          `array` field, counted in `arrays`), limit (the array's %N: most
          of its runs running at once, or ""; the array's pool resource
          `array.<id>` gets this capacity unless it has one, and the run's
          shape demands 1 of it)

  A run whose data holds `hold`, `begin`, `delay` or `after` is parked out
  of the fit index until it may start (see includes/lifecycle/admitNewRun.lua). Every
  run id in an `after` must name a run that exists, or one earlier in the
  same call: a later one, or the run itself, would make a cycle. Every array
  in an `after` group's `arrays` must be one with runs that fitq counts
  (see includes/arrays/arrayTally.lua): staged before this call, so no cycle.

  Runs are staged now by the Redis server's clock (their job's timestamp).

  Returns {CODE.ok, seq of the first run, timestamp}, {CODE.runIdTaken, id},
  {CODE.unknownDependency, id}, {CODE.unknownArrayDependency, array id},
  {CODE.dependencyCycle, id}, {CODE.overQuota, "user open staged total"}
  (the user's `staged` quota, see includes/quotas/quotaOf.lua, bounds their
  runs not ended: a stage, or a batch's first chunk, of `total` more runs
  than it leaves; a later chunk of `count` more),
  {CODE.batchExpired} (a later chunk of a batch whose deadline passed), or
  {CODE.olderLayout} when the namespace holds runs stored by an older fitq.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): no run of the call is staged (and the stager of a
  batch in chunks removes the chunks before it: abortBatch).
]]
-- @include arrays/arrayTally
-- @include arrays/stageArrayRun
-- @include batches/batchState
-- @include bullmq/addJob
-- @include bullmq/orderScore
-- @include lifecycle/admitNewRun
-- @include lifecycle/orderRun
-- @include namespace/olderLayout
-- @include namespace/publish
-- @include namespace/serverNow
-- @include shape/stage
-- @include quotas/quotaOf
-- @include quotas/tallyUserRun
-- @include shape/parseShape
-- @include quotas/projectOwner
local seqKey = KEYS[1]
local idsKey = KEYS[2]
local groupsKey = KEYS[3]
local batchesKey = KEYS[4]
-- (Touched by its includes.)
local arraysKey = KEYS[5]
local arrayTallyKey = KEYS[6]
local holdsKey = KEYS[7]
local poolCapacityKey = KEYS[8]
local poolUsedKey = KEYS[9]
local settingsKey = KEYS[10]
local statsKey = KEYS[11]
local dependentsPendingKey = KEYS[12]
local olderRunsKey = KEYS[13]
local queueWaitKey = KEYS[14]
local queueActiveKey = KEYS[15]
local queuePrioritizedKey = KEYS[16]
local queueDelayedKey = KEYS[17]
local queueWaitingChildrenKey = KEYS[18]
local queueCompletedKey = KEYS[19]
local queueFailedKey = KEYS[20]
local queueEventsKey = KEYS[21]
local queueMetaKey = KEYS[22]
local base, batch, ttl, first, user, host = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == "1", ARGV[5], ARGV[6]
local total, count = tonumber(ARGV[7]), tonumber(ARGV[8])
local ARG0 = 9
-- Arguments per run (see ARGV[8] above).
local PER_RUN = 6

if olderLayout(base) then return {CODE.olderLayout} end
local batchCount = 0
if batch ~= "" then
  local state, _, left = batchState(base, batch)
  if first ~= (state == nil) or state == "expired" then return {CODE.batchExpired} end
  batchCount = left or 0
end
local position = {}
for i = 0, count - 1 do
  local id = ARGV[ARG0 + i * PER_RUN]
  if redis.call("EXISTS", KEY.run(base, id)) == 1 then return {CODE.runIdTaken, id} end
  position[id] = i
end
-- Dependencies: on runs that exist, or earlier in this call (no cycle).
for i = 0, count - 1 do
  local data = ARGV[ARG0 + 3 + i * PER_RUN]
  if string.find(data, '"after"', 1, true) then
    local ok, decoded = pcall(cjson.decode, data)
    local after = ok and type(decoded) == "table" and decoded.after or {}
    for _, group in ipairs(type(after) == "table" and after or {}) do
      for _, dep in ipairs(type(group) == "table" and type(group.ids) == "table" and group.ids or {}) do
        dep = tostring(dep)
        if position[dep] and position[dep] >= i then return {CODE.dependencyCycle, dep} end
        if not position[dep] and redis.call("EXISTS", KEY.run(base, dep)) == 0 then return {CODE.unknownDependency, dep} end
      end
      for _, array in ipairs(type(group) == "table" and type(group.arrays) == "table" and group.arrays or {}) do
        array = tostring(array)
        if not arrayTally(base, array) then return {CODE.unknownArrayDependency, array} end
      end
    end
  end
end

-- A `staged` quota bounds the runs of a user not ended (as Slurm's MaxSubmitJobs): refused whole.
if user ~= "" then
  local quota = quotaOf(base, {}, user)
  if quota and quota.staged then
    local open = math.max(0, tonumber(redis.call("HGET", KEY.userUsage(base, user), "open") or "0") or 0)
    -- (A batch's later chunks are counted in `open` already.)
    local adding = (batch == "" or first) and total or count
    if open + adding > quota.staged then
      return {CODE.overQuota, table.concat({user, open, quota.staged, total}, " ")}
    end
  end
end

-- So does a project's, for its runs in this call (a batch's later chunks are counted in `open` already;
-- a chunk refused aborts the whole batch).
local perProject = {}
for i = 0, count - 1 do
  local parsed = parseShape(ARGV[ARG0 + i * PER_RUN + 1])
  if parsed and parsed.project then perProject[parsed.project] = (perProject[parsed.project] or 0) + 1 end
end
for project, adding in pairs(perProject) do
  local owner = projectOwner(project)
  local quota = quotaOf(base, {}, owner)
  if quota and quota.staged then
    local open = math.max(0, tonumber(redis.call("HGET", KEY.userUsage(base, owner), "open") or "0") or 0)
    if open + adding > quota.staged then
      return {CODE.overQuota, table.concat({owner, open, quota.staged, adding}, " ")}
    end
  end
end

local now = serverNow()
-- (First, so a `batches` key Redis cannot write leaves nothing half staged.)
if batch ~= "" then redis.call("HSET", batchesKey, batch, (now + ttl) .. " " .. (batchCount + count)) end
local firstSeq
for i = 0, count - 1 do
  local at = ARG0 + i * PER_RUN
  local id, shape, priority, data = ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3]
  local seq = redis.call("INCR", seqKey)
  firstSeq = firstSeq or seq
  local score = orderScore(priority, seq)
  addJob(base, id, data, priority, now)
  -- (`runData`: fitq's own copy, which BullMQ's job.updateData never rewrites.)
  redis.call("HSET", KEY.run(base, id), "runData", data, "status", "staged", "seq", seq, "score", score, "shape", shape)
  if batch ~= "" then redis.call("HSET", KEY.run(base, id), "batch", batch) end
  if user ~= "" then redis.call("HSET", KEY.run(base, id), "user", user) end
  local parsed = parseShape(shape)
  if parsed and parsed.project then redis.call("HSET", KEY.run(base, id), "project", parsed.project) end
  tallyUserRun(base, id, nil, "open")
  if host ~= "" then redis.call("HSET", KEY.run(base, id), "stagedFrom", host) end
  if ARGV[at + 4] ~= "" then stageArrayRun(base, id, ARGV[at + 4], ARGV[at + 5]) end
  if not admitNewRun(base, id, data, now) then stage(base, id, shape, score) end
  redis.call("ZADD", idsKey, 0, id)
  orderRun(base, id, seq)
end
if batch == "" then publish(base, {type = "staged", count = count}) end
return {CODE.ok, firstSeq, now}
