-- Turns a packed log (see packLog) back into a stream with the same entry
-- ids, for an ended run that goes on (retried from BullMQ): the log of a
-- run that may print again is a stream, which followers wait on. Leaves the
-- packed log as it is if a stream is already there, or if it is not one
-- packLog wrote (written by hand): readers show the packed entries, then
-- the stream's.
local function unpackLog(base, runId, logMaxLines)
  local streamKey, packedKey = KEY.runLog(base, runId), KEY.runPackedLog(base, runId)
  local packed = redis.call("GET", packedKey)
  if not packed or redis.call("EXISTS", streamKey) == 1 then return end
  local unpacked = pcall(function()
    for _, entry in ipairs(cjson.decode(packed)) do
      redis.call("XADD", streamKey, "MAXLEN", "~", logMaxLines, entry[1], unpack(entry[2]))
    end
  end)
  redis.call("DEL", unpacked and packedKey or streamKey)
end
