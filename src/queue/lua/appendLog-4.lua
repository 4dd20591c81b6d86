#!lua
--[[
  Appends output lines to a run's log, only while the run is still running
  under the claim that produced them and its worker still holds its lease:
  output of a lost or removed run, or of a worker cut off past its lease, is
  dropped, never written after its end marker.

  KEYS[1]  runs:<runId>         hash (its BullMQ job)
  KEYS[2]  runs:<runId>:output  stream: its output
  KEYS[3]  worker:<name>        hash
  KEYS[4]  workers              zset: worker name -> lease deadline

  ARGV[1] worker name, ARGV[2] token, ARGV[3] epoch, ARGV[4] logMaxLines,
  ARGV[5] the number of the first line among the lines of its attempt (1 for
  its first; "" for none), ARGV[6] lines the worker dropped right before it
  while Redis was slow, ARGV[7] lines Redis refused right before it, then
  pairs: stream ("stdout"|"stderr"), line

  Each line is stored with its number (`n`), consecutive within a batch;
  the first also with `slow` and `refused` when not 0, so a reader can tell
  exactly how many lines are missing between two it reads, and why (those
  before the first kept were trimmed: the stream keeps exactly the last
  logMaxLines entries).

  Returns the number of lines written (0 when fenced).

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): that output is dropped, never written past the limit.
]]
-- @include workers/holdsLease
local runKey = KEYS[1]
local runLogKey = KEYS[2]
local workerKey = KEYS[3]
local workersKey = KEYS[4]

if not holdsLease(workerKey, workersKey, ARGV[1], ARGV[2]) then return 0 end
local run = redis.call("HMGET", runKey, "status", "worker", "epoch")
if run[1] ~= "running" or run[2] ~= ARGV[1] or run[3] ~= ARGV[3] then return 0 end
local n = tonumber(ARGV[5])
for i = 8, #ARGV, 2 do
  if not n then
    redis.call("XADD", runLogKey, "*", "stream", ARGV[i], "line", ARGV[i + 1])
  else
    local number = string.format("%.0f", n)
    if i == 8 and (ARGV[6] ~= "0" or ARGV[7] ~= "0") then
      redis.call("XADD", runLogKey, "*", "stream", ARGV[i], "line", ARGV[i + 1], "n", number, "slow", ARGV[6], "refused", ARGV[7])
    else
      redis.call("XADD", runLogKey, "*", "stream", ARGV[i], "line", ARGV[i + 1], "n", number)
    end
    n = n + 1
  end
end
redis.call("XTRIM", runLogKey, "MAXLEN", ARGV[4])
return (#ARGV - 7) / 2
