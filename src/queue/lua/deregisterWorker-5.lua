#!lua
--[[
  Removes a stopping worker. Runs it still holds (none after a graceful stop
  whose ends were recorded) end as lost, or are re-staged per their retries
  (a run with a pending cancellation ends canceled);
  the reason says whether the worker stopped while holding its lease or had
  already lost it (its late ends were refused).

  KEYS[1] workers, KEYS[2] worker, KEYS[3] worker:capacity, KEYS[4] worker:free,
  KEYS[5] worker:runs

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] logMaxLines

  Runs end now by the Redis server's clock (or when the worker was last seen).

  Returns CODE.ok, or CODE.unchanged when the worker is not registered under this token.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): the worker is reaped once its lease has run out and
  Redis has room again.
]]
-- @include serverNow
-- @include holdsLease
-- @include leaseLapsedReason
-- @include lastSeenAlive
-- @include reapWorker
-- @include forgetIfEmpty
local workersKey = KEYS[1]
local workerKey = KEYS[2]
-- (These reapWorker deletes, found by the worker's name.)
local capacityKey = KEYS[3]
local freeKey = KEYS[4]
local runsKey = KEYS[5]
local base, name, token = ARGV[1], ARGV[2], ARGV[3]

if redis.call("HGET", workerKey, "token") ~= token then return CODE.unchanged end
if holdsLease(workerKey, workersKey, name, token) then
  reapWorker(base, name, serverNow(), "worker " .. name .. " stopped", ARGV[4])
else
  -- Its lease ran out before it could stop: its runs ended when it was last seen.
  reapWorker(base, name, lastSeenAlive(base, name, serverNow()), leaseLapsedReason(name), ARGV[4])
end
forgetIfEmpty(base)
return CODE.ok
