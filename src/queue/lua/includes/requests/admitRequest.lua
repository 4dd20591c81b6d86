-- @include requests/requestRefusal

-- Ops that let a run start that would not have: what a worker proves before it starts one.
local STARTS = {release = true, restart = true}

-- Admits `request` to do `op` to a run, as requestRefusal judges it, and
-- records it on a signed run as its `lastRequest` (a later request must be
-- later still), and a release or restart as its `startRequest` too, for
-- workers started with --require-signed to verify the signature (Lua
-- cannot) before they cancel the run, or start it. `signedRun`: the run the
-- signature names, when not this one (a dependent restarted by --cascade).
-- Returns nil when admitted, else the run's user.
local function admitRequest(base, runId, op, request, signedRun)
  local owner, signed = requestRefusal(base, runId, request)
  if owner then return owner end
  if signed then
    local record = op .. " " .. request .. (signedRun and (" " .. signedRun) or "")
    redis.call("HSET", KEY.run(base, runId), "lastRequest", record)
    if STARTS[op] then redis.call("HSET", KEY.run(base, runId), "startRequest", record) end
  end
  return nil
end
