--[[
  Reaps workers whose lease expired: their runs end as lost, their
  reservations and keys go. Bounded work per call.

  KEYS[1] workers   zset: worker name -> lease deadline

  ARGV[1] base, ARGV[2] now, ARGV[3] limit, ARGV[4] logMaxLines

  Returns {reapedNames, their executor queues, nextDeadline}; nextDeadline is
  -1 when no worker is left.
]]
-- @include amounts
-- @include runs
local base, now = ARGV[1], tonumber(ARGV[2])

local reaped = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", "(" .. now, "LIMIT", 0, tonumber(ARGV[3]))
local queues = {}
for i, name in ipairs(reaped) do
  queues[i] = redis.call("HGET", base .. "worker:" .. name, "executorQueue") or ""
  reapWorker(base, name, now, "worker " .. name .. " stopped renewing its lease", ARGV[4])
end
local soonest = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
return {reaped, queues, soonest[2] or -1}
