--[[
  Asks a live worker, on any machine, to stop: gracefully (its runs finish)
  or now (its runs are terminated first). The worker hears it at once by
  pub/sub, or at its next heartbeat if it missed the message. A request to
  stop now is never downgraded by a later graceful one.

  KEYS[1] workers   zset: worker name -> lease deadline
  KEYS[2] worker    hash

  ARGV[1] base, ARGV[2] name, ARGV[3] mode ("graceful" or "now")

  Returns 1, or 0 when no live worker has this name.
]]
-- @include runs
-- @include clock
local base, name, mode = ARGV[1], ARGV[2], ARGV[3]

local deadline = redis.call("ZSCORE", KEYS[1], name)
if not deadline or tonumber(deadline) < serverNow() or redis.call("EXISTS", KEYS[2]) == 0 then return 0 end
if redis.call("HGET", KEYS[2], "stopRequested") ~= "now" then
  redis.call("HSET", KEYS[2], "stopRequested", mode)
end
publish(base, {type = "stop", worker = name, now = redis.call("HGET", KEYS[2], "stopRequested") == "now"})
return 1
