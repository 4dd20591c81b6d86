#!lua
--[[
  Lets go of the blocked head a worker holds resources for: a stopping worker
  claims nothing more, so another worker must be free to hold that run.
  Fenced by token: only the registration that holds the name may, so a stale
  process (cut off past its lease, its name since taken by a new
  registration) drops nothing of the live worker's.

  KEYS[1]  worker:<name>  hash (fields token, name, holding)
  KEYS[2]  holds          hash: held run id -> worker holding it

  ARGV[1] token of the registration letting go

  Returns CODE.ok when a hold was dropped, else CODE.unchanged (also when the worker is not
  registered under this token: then nothing changes).

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
local workerKey = KEYS[1]
local holdsKey = KEYS[2]

if redis.call("HGET", workerKey, "token") ~= ARGV[1] then return CODE.unchanged end
local holding = redis.call("HGET", workerKey, "holding")
redis.call("HDEL", workerKey, "holding")
if holding and redis.call("HGET", holdsKey, holding) == redis.call("HGET", workerKey, "name") then
  redis.call("HDEL", holdsKey, holding)
  return CODE.ok
end
return CODE.unchanged
