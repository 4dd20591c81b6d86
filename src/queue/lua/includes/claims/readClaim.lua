-- The record of a claim on a run (see encodeClaim) in a worker's
-- `worker:<name>:reserved` (`reservedKey`); nil when there is none, or it is
-- unreadable.
local function readClaim(reservedKey, runId)
  local text = redis.call("HGET", reservedKey, runId)
  if not text then return nil end
  local ok, claim = pcall(cjson.decode, text)
  if ok and type(claim) == "table" then return claim end
  return nil
end
