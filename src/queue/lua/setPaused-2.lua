#!lua
--[[
  Pauses or resumes the namespace's queue, as BullMQ's Queue.pause() and
  resume() do (they pause the same queue): while paused, no worker claims a
  run of the namespace; running runs go on.

  KEYS[1] runs:meta     hash: BullMQ's queue settings (field `paused`)
  KEYS[2] runs:events   stream: BullMQ's events

  ARGV[1] base; ARGV[2] "pause" or "resume"

  Returns CODE.ok when it changed something, CODE.unchanged when the queue already was so.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached), as every script that writes.
]]
-- @include emitEvent
-- @include publish
-- @include forgetIfEmpty
local metaKey = KEYS[1]
-- (emitEvent appends to it.)
local eventsKey = KEYS[2]
local base, action = ARGV[1], ARGV[2]
local paused = redis.call("HEXISTS", metaKey, "paused") == 1
if (action == "pause") == paused then return CODE.unchanged end
if action == "pause" then
  redis.call("HSET", metaKey, "paused", 1)
  emitEvent(base, "event", "paused")
else
  redis.call("HDEL", metaKey, "paused")
  emitEvent(base, "event", "resumed")
  -- Workers claim again at once.
  publish(base, {type = "resumed"})
  forgetIfEmpty(base)
end
return CODE.ok
