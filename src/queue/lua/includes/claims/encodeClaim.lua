-- The record of a claim, kept in the worker's own `worker:<name>:reserved`
-- hash (run id -> JSON) beside the run's job hash, so it can be given back
-- even when the job hash is gone (deleted from BullMQ under a running run:
-- obliterate with force, clean of an active job whose lock lapsed):
-- its epoch, the worker share (`reserved`), the pool share (`pooled`), and
-- the GPU devices it took with the share of each, and, for a run with a time
-- limit, its deadline (epoch ms, server clock: the claim's time plus the
-- limit), from which a blocked head's earliest start is known (shadowTime);
-- and what it counts against its user and project (`charged`, quotas/chargeRun); for
-- a preemptible run, `pre`: when it started, its priority band and how long
-- it runs before it may be preempted (preemption/), and once a claim
-- preempts it, `preempting`: the run it makes room for.
local function encodeClaim(epoch, reserved, pooled, devices, deviceShare, deadline, charged, pre)
  return cjson.encode({epoch = tostring(epoch), reserved = reserved, pooled = pooled,
    devices = devices or "", deviceShare = deviceShare or "", deadline = deadline and tostring(deadline) or nil,
    charged = charged ~= "" and charged or nil, pre = pre})
end
