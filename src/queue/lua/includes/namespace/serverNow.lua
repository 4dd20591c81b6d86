-- The Redis server's clock in epoch ms. Leases are judged by it alone, so
-- workers and commands on hosts whose clocks disagree still agree on who is
-- alive; and every time a run records (staged, started, ended) comes from it.
local function serverNow()
  local time = redis.call("TIME")
  return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
