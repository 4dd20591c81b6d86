--[[
  Lets go of the blocked head a worker holds resources for: a stopping worker
  claims nothing more, so another worker must be free to hold that run.
  Fenced by token: only the registration that holds the name may, so a stale
  process (cut off past its lease, its name since taken by a new
  registration) drops nothing of the live worker's.

  KEYS[1] worker   hash (fields token, name, holding)
  KEYS[2] holds    hash: held run id -> worker holding it

  ARGV[1] token of the registration letting go

  Returns 1 when a hold was dropped, else 0 (also when the worker is not
  registered under this token: then nothing changes).
]]
if redis.call("HGET", KEYS[1], "token") ~= ARGV[1] then return 0 end
local holding = redis.call("HGET", KEYS[1], "holding")
redis.call("HDEL", KEYS[1], "holding")
if holding and redis.call("HGET", KEYS[2], holding) == redis.call("HGET", KEYS[1], "name") then
  redis.call("HDEL", KEYS[2], holding)
  return 1
end
return 0
