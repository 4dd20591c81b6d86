-- @include lifecycle/runDataText

-- Whether `request` (`<by> <at> <signature>`, src/security/request-signature.ts)
-- may change a run, without recording it. A run its user did not sign (no
-- `userSignature` in its job data) takes any request, or none. A signed run
-- takes only a request by its user or an admin (`admins`), later than the last
-- one it took (`lastRequest`), so none is replayed. Returns nil when it may
-- (and true as well for a signed run), else the run's user.
local function requestRefusal(base, runId, request)
  local text = runDataText(base, runId)
  if not text or not string.find(text, '"userSignature":', 1, true) then return nil end
  local key = KEY.run(base, runId)
  local owner = redis.call("HGET", key, "user") or ""
  local by, at = string.match(request or "", "^(%S+) (%d+) ed25519:%S+$")
  if not by or (by ~= owner and redis.call("SISMEMBER", KEY.admins(base), by) == 0) then return owner end
  local lastAt = string.match(redis.call("HGET", key, "lastRequest") or "", "^%S+ %S+ (%d+) ")
  if lastAt and tonumber(at) <= tonumber(lastAt) then return owner end
  return nil, true
end
