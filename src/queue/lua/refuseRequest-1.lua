#!lua
--[[
  A worker started with --require-signed refuses to cancel a run its user
  signed when the request recorded on it (`lastRequest`,
  includes/requests/admitRequest.lua) does not prove the cancel: the
  cancellation goes, so the run runs on, and a cancel request that was
  recorded stays (a later request must still be later than it), marked
  refused (`refusedRequest`, and why). Only while the run still records
  that request ("": none): a later one is judged on its own.

  KEYS[1]  runs:<runId>  hash (its BullMQ job)

  ARGV[1] the request as recorded ("": none), ARGV[2] why it is refused

  Returns {CODE.ok}, or {CODE.unchanged} when the run records another
  request now (or is gone).

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached); the worker tries again at its next heartbeat.
]]
local runKey = KEYS[1]
if (redis.call("HGET", runKey, "lastRequest") or "") ~= ARGV[1] or redis.call("EXISTS", runKey) == 0 then return {CODE.unchanged} end
if string.sub(ARGV[1], 1, 7) == "cancel " then redis.call("HSET", runKey, "refusedRequest", ARGV[1], "refusedWhy", ARGV[2]) end
redis.call("HDEL", runKey, "cancelRequested")
return {CODE.ok}
