-- The most a log packLog packs: entries (Redis's stream-node-max-entries
-- default) and bytes of their fields (so packing stays quick).
local LOG_PACK_ENTRIES = 100
local LOG_PACK_BYTES = 65536

-- Packs the log of a run that just ended, if it is short: its entries, as
-- XRANGE gives them ({id, {field, value, ...}}), become one JSON string and
-- the stream goes. Redis gives a stream's first node about 4 KB however few
-- its entries; the string takes about what its entries hold. A longer log
-- stays a stream. Leaves things as they are if a packed log is already there
-- (written into by hand after a retry: readers show the packed entries,
-- then the stream's).
local function packLog(base, runId)
  local streamKey, packedKey = KEY.runLog(base, runId), KEY.runPackedLog(base, runId)
  if redis.call("EXISTS", packedKey) == 1 then return end
  local entries = redis.call("XRANGE", streamKey, "-", "+", "COUNT", LOG_PACK_ENTRIES + 1)
  if #entries == 0 or #entries > LOG_PACK_ENTRIES then return end
  local bytes = 0
  for _, entry in ipairs(entries) do
    for _, value in ipairs(entry[2]) do bytes = bytes + #value end
  end
  if bytes > LOG_PACK_BYTES then return end
  redis.call("SET", packedKey, cjson.encode(entries))
  redis.call("DEL", streamKey)
end
