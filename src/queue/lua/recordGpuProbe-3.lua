#!lua
--[[
  A worker's GPU probe (src/worker/gpu-watch.ts) records what it found: each
  of the worker's devices' state (ok, busy: a compute process fitq did not
  start holds it, lost: nvidia-smi cannot reach it) with its memory and use,
  as src/gpu/device-reading.ts encodes it, and the server time of the
  reading. claimRun places no run on a busy or lost device, nor on any once
  the reading is older than the worker registered (`gpuProbe`); `fitq
  workers`, the dashboard and `fitq runs` (explainRuns) show it. The hash
  is replaced whole, so a device the worker no longer reports has no state.
  A change of any device's state publishes `gpus` (the dashboard redraws).

  KEYS[1]  workers               zset: worker name -> lease deadline
  KEYS[2]  worker:<name>         hash: name, token, gpuProbe, ...
  KEYS[3]  worker:<name>:gpus    hash: at -> server ms; device index -> reading (JSON)

  ARGV[1] base, ARGV[2] name, ARGV[3] token, ARGV[4] n, then n pairs:
  device index, reading

  Returns CODE.ok, or CODE.fenced when the worker is not registered under
  this token or its lease has run out (it records nothing).

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached); the reading then grows old and the devices take no
  run until one lands.
]]
-- @include namespace/publish
-- @include namespace/serverNow
-- @include workers/holdsLease
local workersKey = KEYS[1]
local workerKey = KEYS[2]
local workerGpusKey = KEYS[3]
local base, name, token, count = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

-- A device's state as a reading gives it ("" for none or an unreadable one).
local function stateOf(text)
  local ok, reading = pcall(cjson.decode, text or "")
  return ok and type(reading) == "table" and tostring(reading.state) or ""
end

if not holdsLease(workerKey, workersKey, name, token) then return CODE.fenced end
-- (A worker's devices stay the same while it is registered: comparing theirs is enough.)
local changed = false
local fields = {"at", serverNow()}
for i = 1, count do
  local id, reading = ARGV[3 + 2 * i], ARGV[4 + 2 * i]
  changed = changed or stateOf(redis.call("HGET", workerGpusKey, id)) ~= stateOf(reading)
  fields[#fields + 1] = id
  fields[#fields + 1] = reading
end
redis.call("DEL", workerGpusKey)
redis.call("HSET", workerGpusKey, unpack(fields))
if changed then publish(base, {type = "gpus", worker = name}) end
return CODE.ok
