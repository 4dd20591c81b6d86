#!lua
--[[
  A worker records what its running runs have used so far (src/worker/usage/,
  model/run-usage.ts), at each heartbeat: each run's `usage`, for `fitq runs
  show`, the dashboard and /metrics while it runs. finishRun records the
  last. A run no longer running under this worker and claim is left alone.

  KEYS[1]  workers          zset: worker name -> lease deadline
  KEYS[2]  worker:<name>    hash: name, token, ...

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] n, then n triples:
  run id, claim epoch, usage (JSON)

  Returns {CODE.ok, runs recorded}, or {CODE.fenced, 0} when the worker is
  not registered under this token or its lease has run out (it records
  nothing).

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached); the usage shown then is older.
]]
-- @include workers/holdsLease
-- @include lifecycle/readRun
local workersKey = KEYS[1]
local workerKey = KEYS[2]
local base, name, token, count = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

if not holdsLease(workerKey, workersKey, name, token) then return {CODE.fenced, 0} end
local recorded = 0
for i = 1, count do
  local runId, epoch, usage = ARGV[2 + 3 * i], ARGV[3 + 3 * i], ARGV[4 + 3 * i]
  local run = readRun(base, runId, "status", "worker", "epoch")
  if run and run[1] == "running" and run[2] == name and run[3] == epoch then
    redis.call("HSET", KEY.run(base, runId), "usage", usage)
    recorded = recorded + 1
  end
end
return {CODE.ok, recorded}
