--[[
  Records the end of a run and releases what it reserved. Only the current
  claim of a live registration may: the run must still be running under this
  worker and epoch, and the worker registered under this token with a lease
  that has not run out (server clock). Anything else is a late writer (a
  worker cut off past its lease, an older claim) and changes nothing; the
  reaper ends such a run.

  A run its worker terminated because the worker was stopped (status
  "stopped") did not fail: after its worker's share is released it ends
  canceled if its cancellation was requested (reason "canceled (<reason>)";
  the worker had not acted on it yet), else goes back to staged at its place
  if it has retries left (using one), else ends lost, with the given reason.

  KEYS[1] run               hash (its BullMQ job)
  KEYS[2] worker            hash
  KEYS[3] worker:free       hash
  KEYS[4] worker:runs       set
  KEYS[5] worker:devices    hash: GPU device index -> free share
  KEYS[6] workers           zset: worker name -> lease deadline

  ARGV[1] base, ARGV[2] runId, ARGV[3] worker name, ARGV[4] token, ARGV[5] epoch,
  ARGV[6] status (completed|failed|canceled|rejected|stopped), ARGV[7] exitCode ("" if none),
  ARGV[8] signal ("" if none), ARGV[9] reason, ARGV[10] now, ARGV[11] logMaxLines

  Returns {1, status recorded} (a stopped run: "canceled", "staged" or "lost");
  {0, the run's status ("" if it is gone)} when the run has moved on;
  {-1, ""} when the worker is not registered under this token or its lease
  has run out. Nothing changes unless it returns 1.
]]
-- @include runs
-- @include lease
local base, runId, workerName, token, epoch = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local status, exitCode, signal, reason, now = ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10]

if not holdsLease(KEYS[2], KEYS[6], workerName, token) then return {-1, ""} end
local run = redis.call("HMGET", KEYS[1], "status", "worker", "epoch", "reserved", "devices", "deviceShare")
if run[1] ~= "running" or run[2] ~= workerName or run[3] ~= epoch then return {0, run[1] or ""} end

-- The worker's share, as the claim recorded it. The pool's share goes back
-- in endRun or restageRun.
adjustAmounts(KEYS[3], parseResourceList(run[4]), 1)
if run[5] and run[5] ~= "" then
  local share = parseAmount(run[6])
  for id in string.gmatch(run[5], "[^,]+") do
    redis.call("HSET", KEYS[5], id, formatAmount(addAmounts(parseAmount(redis.call("HGET", KEYS[5], id)), share)))
  end
end
redis.call("HINCRBY", KEYS[2], "running", -1)
redis.call("SREM", KEYS[4], runId)

if status == "stopped" then
  return {1, settleAbandonedRun(base, runId, reason, now, ARGV[11])}
end
if exitCode ~= "" then redis.call("HSET", KEYS[1], "exitCode", exitCode) end
if signal ~= "" then redis.call("HSET", KEYS[1], "signal", signal) end
endRun(base, runId, status, now, reason, ARGV[11], exitCode ~= "" and exitCode or "null")
return {1, status}
