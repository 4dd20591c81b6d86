-- @include claimsKey

-- The record of a claim (nil when there is none, or it is unreadable).
local function readClaim(workerKey, runId)
  local text = redis.call("HGET", claimsKey(workerKey), runId)
  if not text then return nil end
  local ok, claim = pcall(cjson.decode, text)
  if ok and type(claim) == "table" then return claim end
  return nil
end
