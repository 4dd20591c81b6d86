-- A worker's GPU probe's last reading, from its `worker:<name>:gpus` hash
-- (`at`: the server time of the reading; one field per device:
-- src/gpu/device-reading.ts's JSON, `state` "ok", "busy" or "lost", `why`,
-- its memory): the devices unusable now (id -> {state, why}) and each
-- device's reading (id -> table). `staleMs`: how old a reading may be (the
-- worker's probe interval x 2, registered as `gpuProbe`); nil or 0 when the
-- worker does not probe, and then no device is unusable and none has a
-- reading. With no reading yet, or one older than that, every device is
-- unusable: a run is never placed from a stale reading.
local function readGpuReadings(gpusKey, ids, staleMs, clock)
  local unusable, readings = {}, {}
  if not staleMs or staleMs <= 0 then return unusable, readings end
  local at = tonumber(redis.call("HGET", gpusKey, "at") or "")
  local stale
  if not at then
    stale = "no GPU reading yet (the worker probes its devices every " .. string.format("%.0f", staleMs / 2000) .. " s)"
  elseif clock - at > staleMs then
    stale = "its GPU reading is " .. string.format("%.0f", (clock - at) / 1000) .. " s old (nvidia-smi slow or the worker busy)"
  end
  for _, id in ipairs(ids) do
    local ok, reading = pcall(cjson.decode, redis.call("HGET", gpusKey, id) or "")
    if ok and type(reading) == "table" then readings[id] = reading end
    if stale then
      unusable[id] = {state = "stale", why = stale}
    elseif not readings[id] then
      unusable[id] = {state = "stale", why = "no reading of it"}
    elseif reading.state ~= "ok" then
      unusable[id] = {state = tostring(reading.state), why = tostring(reading.why or reading.state)}
    end
  end
  return unusable, readings
end
