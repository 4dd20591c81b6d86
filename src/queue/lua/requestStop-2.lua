#!lua
--[[
  Asks a live worker, on any machine, to stop: gracefully (its runs finish)
  or now (its runs are terminated first). The worker hears it at once by
  pub/sub, or at its next heartbeat if it missed the message. A request to
  stop now is never downgraded by a later graceful one.

  KEYS[1]  workers        zset: worker name -> lease deadline
  KEYS[2]  worker:<name>  hash

  ARGV[1] base, ARGV[2] name, ARGV[3] mode ("graceful" or "now")

  Returns CODE.ok, or CODE.unchanged when no live worker has this name.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): no stop is requested, the user is told so.
]]
-- @include namespace/serverNow
-- @include namespace/publish
local workersKey = KEYS[1]
local workerKey = KEYS[2]
local base, name, mode = ARGV[1], ARGV[2], ARGV[3]

local deadline = redis.call("ZSCORE", workersKey, name)
if not deadline or tonumber(deadline) < serverNow() or redis.call("EXISTS", workerKey) == 0 then return CODE.unchanged end
if redis.call("HGET", workerKey, "stopRequested") ~= "now" then
  redis.call("HSET", workerKey, "stopRequested", mode)
end
publish(base, {type = "stop", worker = name, now = redis.call("HGET", workerKey, "stopRequested") == "now"})
return CODE.ok
