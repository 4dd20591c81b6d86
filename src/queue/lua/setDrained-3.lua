#!lua
--[[
  `fitq drain` / `fitq undrain`: marks a live worker drained (it finishes
  what it runs, claims nothing more and stays registered) or clears it.
  Draining also takes the worker's hold off its blocked head, in the same
  step, so another worker may hold that run; claimRun refuses a drained
  worker anything, holds included. The worker hears it by pub/sub (`drain`)
  and remembers it at its claims and heartbeats, so a re-registration of
  the same worker process stays drained; a new process under the name is
  not drained.

  KEYS[1]  workers        zset: worker name -> lease deadline
  KEYS[2]  worker:<name>  hash (field `drained`: when it was drained, epoch ms)
  KEYS[3]  holds          hash: held run id -> worker holding it

  ARGV[1] base, ARGV[2] name, ARGV[3] "drain" or "undrain"

  Returns {CODE.ok, changed}: changed is 1 when the worker was not so
  already; or {CODE.unchanged} when no live worker has this name.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing changes, the user is told so.
]]
-- @include namespace/serverNow
-- @include namespace/publish
-- @include workers/dropWorkerHold
local workersKey = KEYS[1]
local workerKey = KEYS[2]
local holdsKey = KEYS[3]
local base, name, action = ARGV[1], ARGV[2], ARGV[3]
local now = serverNow()

local deadline = redis.call("ZSCORE", workersKey, name)
if not deadline or tonumber(deadline) < now or redis.call("EXISTS", workerKey) == 0 then return {CODE.unchanged} end
local was = redis.call("HEXISTS", workerKey, "drained") == 1
if action == "drain" then
  if not was then redis.call("HSET", workerKey, "drained", now) end
  -- Its blocked head is free for another worker to hold.
  if dropWorkerHold(workerKey, holdsKey, name) then publish(base, {type = "holds", worker = name}) end
else
  redis.call("HDEL", workerKey, "drained")
end
publish(base, {type = "drain", worker = name})
return {CODE.ok, ((action == "drain") ~= was) and 1 or 0}
