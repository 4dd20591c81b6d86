-- @include requests/requestRefusal

-- Admits `request` to do `op` to a run, as requestRefusal judges it, and
-- records it on a signed run as its `lastRequest`, for workers started with
-- --require-signed to verify the signature (Lua cannot) before they act on
-- it or start the run. `signedRun`: the run the signature names, when not
-- this one (a dependent restarted by --cascade). Returns nil when admitted,
-- else the run's user.
local function admitRequest(base, runId, op, request, signedRun)
  local owner, signed = requestRefusal(base, runId, request)
  if owner then return owner end
  if signed then
    redis.call("HSET", KEY.run(base, runId), "lastRequest", op .. " " .. request .. (signedRun and (" " .. signedRun) or ""))
  end
  return nil
end
