--[[
  Removes a stopping worker. Runs it still holds (none after a graceful stop)
  end as lost.

  KEYS[1] workers, KEYS[2] worker, KEYS[3] worker:capacity, KEYS[4] worker:free,
  KEYS[5] worker:runs

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] now, ARGV[5] logMaxLines

  Returns 1, or 0 when the worker is not registered under this token.
]]
-- @include amounts
-- @include runs
-- @include namespace
local base, name, token = ARGV[1], ARGV[2], ARGV[3]

if redis.call("HGET", KEYS[2], "token") ~= token then return 0 end
reapWorker(base, name, ARGV[4], "worker " .. name .. " stopped", ARGV[5])
forgetIfEmpty(base)
return 1
