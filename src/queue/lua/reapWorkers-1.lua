#!lua
--[[
  Reaps workers whose lease expired: their runs end as lost (or are
  re-staged per their retries; a run with a pending cancellation ends
  canceled), their reservations and keys go. Bounded work per call.

  KEYS[1] workers   zset: worker name -> lease deadline

  ARGV[1] base, ARGV[2] limit, ARGV[3] logMaxLines

  Returns {reapedNames, msUntilNextDeadline}; the last is -1 when no worker
  is left. Time is the Redis server's clock.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): dead workers are reaped once it has room again.
]]
-- @include serverNow
-- @include leaseLapsedReason
-- @include lastSeenAlive
-- @include reapWorker
-- @include forgetIfEmpty
local workersKey = KEYS[1]
local base = ARGV[1]
local now = serverNow()

local reaped = redis.call("ZRANGEBYSCORE", workersKey, "-inf", "(" .. now, "LIMIT", 0, tonumber(ARGV[2]))
for _, name in ipairs(reaped) do
  reapWorker(base, name, lastSeenAlive(base, name, now), leaseLapsedReason(name), ARGV[3])
end
if #reaped > 0 then forgetIfEmpty(base) end
local soonest = redis.call("ZRANGE", workersKey, 0, 0, "WITHSCORES")
return {reaped, soonest[2] and (tonumber(soonest[2]) - now) or -1}
