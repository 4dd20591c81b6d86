-- What a claim reserved, kept in the worker's own `worker:<name>:reserved`
-- hash (run id -> JSON) beside the run's job hash, so it can be given back
-- even when the job hash is gone (deleted from BullMQ under a running run:
-- obliterate with force, clean of an active job whose lock lapsed).
local function claimsKey(workerKey) return workerKey .. ":reserved" end
