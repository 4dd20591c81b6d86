-- @include namespace/publish

-- A run ended without its worker recording it (canceled while staged or
-- parked, lost with its worker, rejected by reconciling): its notification
-- (`fitq stage --notify`, or the namespace's `fitq notify set`) is left in
-- `notify:outbox` for a live worker to send (src/worker/notifier.ts), as the
-- worker that runs a run sends its own. Only for runs with somewhere to go.
local function notifyOutbox(base, runId, data)
  local own = data and string.find(data, '"notify"', 1, true)
  if not own and redis.call("HEXISTS", KEY.settings(base), "notifyUrl") == 0 then return end
  redis.call("RPUSH", KEY.notifyOutbox(base), runId)
  publish(base, {type = "outbox"})
end
