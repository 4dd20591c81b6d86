-- @include preemption/chooseVictims
-- @include preemption/startsElsewhere
-- @include bullmq/emitEvent

-- Preempts runs of this worker for its blocked head (`head`), in the claim
-- that holds the head: the head's hold keeps what they free for it, so no
-- other run takes it meanwhile and nothing is oversubscribed (they keep
-- their reservation until their worker records their end). Chosen by
-- chooseVictims, and only when no other worker could start the head now
-- (startsElsewhere). Each victim's claim record and job hash say so
-- (`preempting`: the head, and since when); its worker signals it, waits
-- its grace and stops it, and finishRun puts it back as staged at its
-- place; its worker hears it in this claim's reply, or its next
-- heartbeat's. `keys`: the worker's reserved and the namespace's workers.
-- Returns every run of this worker being preempted, and the run it makes
-- room for: {runId, forRun, ...}; and in how many ms a run of it passes its
-- --preempt-after (nil for none), when none can be preempted now.
local function preemptFor(base, keys, name, view, head, clock)
  local victims, freeing, soonest = chooseVictims(base, view, head, keys.reserved, clock)
  if victims and #victims > 0 and startsElsewhere(base, keys.workers, name, head, clock) then victims = nil end
  local ids = {}
  for _, victim in ipairs(freeing) do
    ids[#ids + 1] = victim.id
    ids[#ids + 1] = tostring(victim.claim.preempting)
  end
  for _, victim in ipairs(victims or {}) do
    victim.claim.preempting = head.id
    redis.call("HSET", keys.reserved, victim.id, cjson.encode(victim.claim))
    -- (A job deleted from BullMQ under its run is not made again.)
    if redis.call("EXISTS", KEY.run(base, victim.id)) == 1 then
      redis.call("HSET", KEY.run(base, victim.id), "preempting", head.id .. "|" .. string.format("%.0f", clock))
      emitEvent(base, "preempting", victim.id, "for", head.id)
    end
    ids[#ids + 1] = victim.id
    ids[#ids + 1] = head.id
  end
  return ids, soonest
end
