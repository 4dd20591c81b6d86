-- The record of a claim (kept in `worker:<name>:reserved`, see claimsKey):
-- its epoch, the worker share (`reserved`), the pool share (`pooled`), and
-- the GPU devices it took with the share of each, and, for a run with a time
-- limit, its deadline (epoch ms, server clock: the claim's time plus the
-- limit), from which a blocked head's earliest start is known (shadowTime).
local function encodeClaim(epoch, reserved, pooled, devices, deviceShare, deadline)
  return cjson.encode({epoch = tostring(epoch), reserved = reserved, pooled = pooled,
    devices = devices or "", deviceShare = deviceShare or "", deadline = deadline and tostring(deadline) or nil})
end
