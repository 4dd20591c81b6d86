--[[
  Appends output lines to a run's log, only while the run is still running
  under the claim that produced them: output of a lost or removed run is
  dropped, never written after its end marker.

  KEYS[1] run       hash
  KEYS[2] run:log   stream

  ARGV[1] worker name, ARGV[2] epoch, ARGV[3] logMaxLines,
  then pairs: stream ("stdout"|"stderr"), line

  Returns the number of lines written (0 when fenced).
]]
local run = redis.call("HMGET", KEYS[1], "status", "worker", "epoch")
if run[1] ~= "running" or run[2] ~= ARGV[1] or run[3] ~= ARGV[2] then return 0 end
for i = 4, #ARGV, 2 do
  redis.call("XADD", KEYS[2], "MAXLEN", "~", ARGV[3], "*", "stream", ARGV[i], "line", ARGV[i + 1])
end
return (#ARGV - 3) / 2
