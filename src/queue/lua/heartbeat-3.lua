--[[
  Renews a worker's lease, and the locks of its runs' jobs with it.

  KEYS[1] workers       zset: worker name -> lease deadline
  KEYS[2] worker        hash
  KEYS[3] worker:runs   set

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] leaseMs
  (the new deadline is the Redis server's clock + leaseMs)

  Returns {1, cancelIds, stopRequested, held}: the worker's runs whose
  cancellation was requested, "graceful", "now" or "" (safety nets for missed
  cancel and stop messages), and every run Redis holds for the worker with
  its claim epoch (runId, epoch, ...: the worker gives back a claim whose
  reply it never received); or {-1} when the worker is not
  registered under this token, or its lease has lapsed (fenced).
]]
-- @include lease
-- @include jobs
local base, name, token = ARGV[1], ARGV[2], ARGV[3]

-- A lapsed lease is not revived: claimRun already treats the worker as gone.
if not holdsLease(KEYS[2], KEYS[1], name, token) then return {-1} end
local now = serverNow()
redis.call("ZADD", KEYS[1], now + tonumber(ARGV[4]), name)
redis.call("HSET", KEYS[2], "heartbeatAt", now)
local cancels, held = {}, {}
for _, runId in ipairs(redis.call("SMEMBERS", KEYS[3])) do
  local key = jobKey(base, runId)
  held[#held + 1] = runId
  held[#held + 1] = redis.call("HGET", key, "epoch") or ""
  -- Its job's lock lasts as long as the lease.
  if redis.call("GET", key .. ":lock") == token then redis.call("PEXPIRE", key .. ":lock", ARGV[4]) end
  if redis.call("HGET", key, "cancelRequested") == "1" then
    cancels[#cancels + 1] = runId
  end
end
return {1, cancels, redis.call("HGET", KEYS[2], "stopRequested") or "", held}
