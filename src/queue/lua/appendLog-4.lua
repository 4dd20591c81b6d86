#!lua
--[[
  Appends output lines to a run's log, only while the run is still running
  under the claim that produced them and its worker still holds its lease:
  output of a lost or removed run, or of a worker cut off past its lease, is
  dropped, never written after its end marker.

  KEYS[1] run       hash (its BullMQ job)
  KEYS[2] output    stream
  KEYS[3] worker    hash
  KEYS[4] workers   zset: worker name -> lease deadline

  ARGV[1] worker name, ARGV[2] token, ARGV[3] epoch, ARGV[4] logMaxLines,
  then pairs: stream ("stdout"|"stderr"), line

  Returns the number of lines written (0 when fenced).

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): that output is dropped, never written past the limit.
]]
-- @include holdsLease
local runKey = KEYS[1]
local outputKey = KEYS[2]
local workerKey = KEYS[3]
local workersKey = KEYS[4]

if not holdsLease(workerKey, workersKey, ARGV[1], ARGV[2]) then return 0 end
local run = redis.call("HMGET", runKey, "status", "worker", "epoch")
if run[1] ~= "running" or run[2] ~= ARGV[1] or run[3] ~= ARGV[3] then return 0 end
for i = 5, #ARGV, 2 do
  redis.call("XADD", outputKey, "MAXLEN", "~", ARGV[4], "*", "stream", ARGV[i], "line", ARGV[i + 1])
end
return (#ARGV - 4) / 2
