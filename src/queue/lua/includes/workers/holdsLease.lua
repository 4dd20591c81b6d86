-- @include namespace/serverNow

-- Whether a worker is registered under this token with a lease that has not
-- run out by the server's clock. Only such a worker may claim, renew, store
-- output or record an end: one cut off past its lease is as good as reaped,
-- whether or not a reaper has come by yet.
local function holdsLease(workerKey, workersKey, name, token)
  if redis.call("HGET", workerKey, "token") ~= token then return false end
  local deadline = redis.call("ZSCORE", workersKey, name)
  return deadline and tonumber(deadline) >= serverNow() or false
end
