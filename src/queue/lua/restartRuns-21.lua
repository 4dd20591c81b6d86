#!lua
--[[
  `fitq restart`: stages ended runs again (includes/lifecycle/reopenRun.lua), each a
  fresh attempt with the same id at its original place in the order. The
  runs that depend on a restarted run wait for it again (their record of
  how it ended goes; one kept with a dependency that could never be met
  waits again). With cascade, the dependents that were canceled because of
  it (`canceledFor`) are restarted too, and theirs in turn: at most
  CASCADE_LIMIT runs per call in all (the reply says which were left: the
  caller restarts them in the next call). The runs waiting for an array
  are looked at once per call, however many of its runs it restarts. A restarted run of
  an array is open again in the array's tally: the runs waiting for the
  whole array are judged again too, and with cascade those canceled
  because of the array (`canceledFor` array:<id>) restarted.

  KEYS[1]  ids         zset of every run id (a run must be listed there)
  KEYS[2..20] what its includes touch, each named at its top: groups,
  batches, arrays, arrays:tally, holds, pool:capacity, pool:used, settings,
  stats, dependents-pending, runs:wait, runs:active, runs:prioritized,
  runs:delayed, runs:waiting-children, runs:completed, runs:failed,
  runs:events, runs:meta
  KEYS[21] admins      set: admins, whose requests may restart any signed run (includes/requests/)

  ARGV[1] base, ARGV[2] cascade ("1" or "0"), ARGV[3] logMaxLines,
  ARGV[4..] pairs of a run id and the request for it ("<by> <at>
  <signature>", or ""): a run its user signed is restarted only at the
  request of its user or an admin (includes/requests/admitRequest.lua); a
  dependent the cascade reaches, at the request that restarted the run it
  depends on (recorded as signed for that run).

  Returns one entry per run id, then one per run restarted by the cascade,
  "runId|outcome|detail": restarted (detail: where it went: staged,
  delayed, held, deps, canceled), notEnded (detail: its status), notYours
  (detail: its user), unknown, cascadeLeft (a dependent not restarted: the
  limit was reached).

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing is restarted.
]]
-- @include lifecycle/isEnded
-- @include batches/batchState
-- @include namespace/serverNow
-- @include lifecycle/reopenRun
-- @include dependencies/evaluateDependent
-- @include namespace/publish
-- @include requests/admitRequest
local idsKey = KEYS[1]
-- (Touched by its includes.)
local groupsKey = KEYS[2]
local batchesKey = KEYS[3]
local arraysKey = KEYS[4]
local arrayTallyKey = KEYS[5]
local holdsKey = KEYS[6]
local poolCapacityKey = KEYS[7]
local poolUsedKey = KEYS[8]
local settingsKey = KEYS[9]
local statsKey = KEYS[10]
local dependentsPendingKey = KEYS[11]
local queueWaitKey = KEYS[12]
local queueActiveKey = KEYS[13]
local queuePrioritizedKey = KEYS[14]
local queueDelayedKey = KEYS[15]
local queueWaitingChildrenKey = KEYS[16]
local queueCompletedKey = KEYS[17]
local queueFailedKey = KEYS[18]
local queueEventsKey = KEYS[19]
local queueMetaKey = KEYS[20]
local adminsKey = KEYS[21]
local base, cascade, logMaxLines = ARGV[1], ARGV[2] == "1", ARGV[3]
local now = serverNow()
-- Runs restarted by the cascade per call (each costs about what a run named does).
local CASCADE_LIMIT = 50

local results, staged, done, causesSeen = {}, 0, 0, {}
-- Each: the run id, whether the cascade reached it, the request, the run that request was signed for (a cascade's).
local queue = {}
for i = 4, #ARGV, 2 do queue[#queue + 1] = {ARGV[i], false, ARGV[i + 1], nil} end
local i = 1
while i <= #queue do
  local runId, byCascade, request, signedRun = queue[i][1], queue[i][2], queue[i][3], queue[i][4]
  i = i + 1
  local key = KEY.run(base, runId)
  local run = redis.call("HMGET", key, "status", "batch")
  if not run[1] or redis.call("ZSCORE", idsKey, runId) == false or batchState(base, run[2]) then
    if not byCascade then results[#results + 1] = runId .. "|unknown|" end
  elseif not isEnded(run[1]) then
    if not byCascade then results[#results + 1] = runId .. "|notEnded|" .. run[1] end
  elseif byCascade and done >= CASCADE_LIMIT then
    results[#results + 1] = runId .. "|cascadeLeft|"
  else
    local owner = admitRequest(base, runId, "restart", request, signedRun)
    if owner then
      results[#results + 1] = runId .. "|notYours|" .. owner
    else
      done = done + 1
      local where, arrayCause = reopenRun(base, runId, now, logMaxLines)
      if where == "staged" then staged = staged + 1 end
      results[#results + 1] = runId .. "|restarted|" .. where
      -- Its dependents (and its array's) wait for it again; with cascade, those canceled for it run again too.
      for _, cause in ipairs({runId, arrayCause}) do
        local members = causesSeen[cause] and {} or redis.call("SMEMBERS", KEY.dependents(base, cause))
        causesSeen[cause] = true
        for _, dependent in ipairs(members) do
          local depKey = KEY.run(base, dependent)
          redis.call("HDEL", depKey, "dep:" .. cause)
          local d = redis.call("HMGET", depKey, "status", "waitDeps", "canceledFor")
          if d[1] == "staged" and d[2] then
            redis.call("HDEL", depKey, "depsNever")
            evaluateDependent(base, dependent, cause, now, logMaxLines)
          elseif cascade and d[1] == "canceled" and d[3] == cause then
            queue[#queue + 1] = {dependent, true, request, signedRun or runId}
          end
        end
      end
    end
  end
end
if staged > 0 then publish(base, {type = "staged", count = staged}) end
return results
