-- @include lifecycle/endRun
-- @include lifecycle/restageRun

-- Settles a running run its worker no longer runs (the worker died, lost its
-- lease, stopped, restarted, or terminated it while stopping), for `reason`.
-- A run whose cancellation was requested ends canceled ("canceled (reason)"):
-- it is never run again. Else it is re-staged if it has retries left, or ends
-- lost. A run that ends, ends at endedAt, its pool share returned (its
-- worker's share goes with the worker's keys, or back in finishRun).
-- `how` (restageRun): "lost" by default, "preempted" for a run a claim was
-- preempting (its `preempting`); "unstarted" (its worker could not
-- start it for want of its own means) and "preempted" (a claim preempted
-- it) re-stage it without spending a retry.
-- Returns the status it now has: "canceled", "staged" or "lost".
local function settleAbandonedRun(base, runId, reason, endedAt, logMaxLines, how)
  if redis.call("HGET", KEY.run(base, runId), "cancelRequested") == "1" then
    endRun(base, runId, "canceled", endedAt, "canceled (" .. reason .. ")", logMaxLines)
    return "canceled"
  end
  if how == nil then
    -- Its worker went while a claim preempted it: back to staged as the preemption would have put it.
    local preempting = redis.call("HGET", KEY.run(base, runId), "preempting")
    if preempting then how, reason = "preempted", reason .. ", as it was being preempted for run " .. string.match(preempting, "^[^|]*") end
  end
  if restageRun(base, runId, reason, logMaxLines, how or "lost") then return "staged" end
  endRun(base, runId, "lost", endedAt, reason, logMaxLines)
  return "lost"
end
