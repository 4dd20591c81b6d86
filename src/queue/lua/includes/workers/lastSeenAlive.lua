-- When a dead worker was last known alive: its last heartbeat (server clock),
-- never later than now. Its lost runs end then, not when someone noticed.
local function lastSeenAlive(base, name, now)
  local heartbeatAt = tonumber(redis.call("HGET", KEY.worker(base, name), "heartbeatAt") or "")
  if heartbeatAt == nil or heartbeatAt > tonumber(now) then return tonumber(now) end
  return heartbeatAt
end
