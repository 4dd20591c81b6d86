-- The record of a claim (kept in `worker:<name>:reserved`, see claimsKey):
-- its epoch, the worker share (`reserved`), the pool share (`pooled`), and
-- the GPU devices it took with the share of each.
local function encodeClaim(epoch, reserved, pooled, devices, deviceShare)
  return cjson.encode({epoch = tostring(epoch), reserved = reserved, pooled = pooled,
    devices = devices or "", deviceShare = deviceShare or ""})
end
