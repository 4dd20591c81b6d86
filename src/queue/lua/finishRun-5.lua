--[[
  Records the end of a run and releases what it reserved, unless the run has
  moved on (lost, re-claimed): the claim epoch fences late writers.

  KEYS[1] run               hash
  KEYS[2] worker            hash
  KEYS[3] worker:free       hash
  KEYS[4] worker:runs       set
  KEYS[5] worker:devices    hash: GPU device index -> free share

  ARGV[1] base, ARGV[2] runId, ARGV[3] worker name, ARGV[4] epoch,
  ARGV[5] status (completed|failed|canceled|rejected), ARGV[6] exitCode ("" if none),
  ARGV[7] signal ("" if none), ARGV[8] reason, ARGV[9] now, ARGV[10] logMaxLines

  Returns 1 when recorded, 0 when the run had moved on (nothing changed).
]]
-- @include amounts
-- @include runs
local base, runId, workerName, epoch = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local status, exitCode, signal, reason, now = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]

local run = redis.call("HMGET", KEYS[1], "status", "worker", "epoch", "resources", "pooled", "devices", "deviceShare",
  "reserved")
if run[1] ~= "running" or run[2] ~= workerName or run[3] ~= epoch then return 0 end

if redis.call("EXISTS", KEYS[2]) == 1 then
  -- The worker's share, as the claim recorded it (older records: the demands
  -- less what came from the pool). endRun returns the pool's share.
  local own = {}
  if run[8] then
    own = parseResourceList(run[8])
  else
    local pooled = {}
    for _, item in ipairs(parseResourceList(run[5])) do pooled[item[1]] = true end
    for _, item in ipairs(parseResourceList(run[4])) do
      if not pooled[item[1]] then own[#own + 1] = item end
    end
  end
  adjustAmounts(KEYS[3], own, 1)
  if run[6] and run[6] ~= "" then
    local share = parseAmount(run[7])
    for id in string.gmatch(run[6], "[^,]+") do
      redis.call("HSET", KEYS[5], id, formatAmount(addAmounts(parseAmount(redis.call("HGET", KEYS[5], id)), share)))
    end
  end
  redis.call("HINCRBY", KEYS[2], "running", -1)
end
redis.call("SREM", KEYS[4], runId)
if exitCode ~= "" then redis.call("HSET", KEYS[1], "exitCode", exitCode) end
if signal ~= "" then redis.call("HSET", KEYS[1], "signal", signal) end
endRun(base, runId, status, now, reason, ARGV[10])
return 1
