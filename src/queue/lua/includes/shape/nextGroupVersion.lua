-- A group's next version (in `groups`): the server's clock in microseconds,
-- and always above the one before (`was`, or false), so a group's log
-- (indexShape) orders its changes even within one microsecond. Below 2^53
-- until the year 2255: exact in Lua's numbers.
local function nextGroupVersion(was)
  local time = redis.call("TIME")
  local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
  local before = tonumber(was or "") or 0
  return string.format("%.0f", math.max(now, before + 1))
end
