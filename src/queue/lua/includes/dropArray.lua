-- Forgets an array that has no run left: its count in `arrays` and its pool
-- resource `array.<id>` (the %N limit), with its usage once that is zero.
local function dropArray(base, array)
  redis.call("HDEL", base .. "arrays", array)
  local resource = "array." .. array
  redis.call("HDEL", base .. "pool:capacity", resource)
  local used = redis.call("HGET", base .. "pool:used", resource)
  if used == false or used == "0" then redis.call("HDEL", base .. "pool:used", resource) end
end
