--[[
  Lets go of the blocked head a worker holds resources for: a stopping worker
  claims nothing more, so another worker must be free to hold that run.

  KEYS[1] worker   hash (field holding)
  KEYS[2] holds    hash: held run id -> worker holding it

  Returns 1 when a hold was dropped, else 0.
]]
local holding = redis.call("HGET", KEYS[1], "holding")
redis.call("HDEL", KEYS[1], "holding")
if holding and redis.call("HGET", KEYS[2], holding) == redis.call("HGET", KEYS[1], "name") then
  redis.call("HDEL", KEYS[2], holding)
  return 1
end
return 0
