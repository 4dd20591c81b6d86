#!lua
--[[
  At the end of a preempted run's grace, whether its preemption still
  stands (includes/preemption/preemptFor.lua): the run it makes room for
  (its claim record's `preempting`) still waits, staged and not held, so
  its worker stops it; else (that run started, here or elsewhere, was held,
  canceled or removed) the preemption is dropped: the run runs on, its
  `preempting` marks cleared from its claim record and its job.

  KEYS[1]  worker:<name>           hash
  KEYS[2]  workers                 zset: worker name -> lease deadline
  KEYS[3]  worker:<name>:reserved  hash: run id -> what its claim reserved (JSON)

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] runId, ARGV[5] epoch

  Returns {CODE.ok, "stop" or "keep", the run it made room for};
  {CODE.unchanged} when this claim of the run is not being preempted (its
  record is gone, of another epoch, or says nothing of it);
  {CODE.fenced} when the worker is not registered under this token, or its
  lease has run out.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory;
  its worker then stops the run, as the preemption asked.
]]
-- @include workers/holdsLease
-- @include claims/readClaim
local workerKey = KEYS[1]
local workersKey = KEYS[2]
local workerReservedKey = KEYS[3]
local base, name, token, runId, epoch = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]

if not holdsLease(workerKey, workersKey, name, token) then return {CODE.fenced} end
local claim = readClaim(workerReservedKey, runId)
if not claim or claim.epoch ~= epoch or not claim.preempting then return {CODE.unchanged} end
local head = tostring(claim.preempting)
local waiting = redis.call("HMGET", KEY.run(base, head), "status", "held")
if waiting[1] == "staged" and waiting[2] ~= "1" then return {CODE.ok, "stop", head} end
claim.preempting = nil
redis.call("HSET", workerReservedKey, runId, cjson.encode(claim))
if redis.call("EXISTS", KEY.run(base, runId)) == 1 then redis.call("HDEL", KEY.run(base, runId), "preempting") end
return {CODE.ok, "keep", head}
