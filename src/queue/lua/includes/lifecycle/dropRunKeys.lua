-- Deletes the keys fitq keeps beside a run's job: its output (stream or
-- packed), its history of attempts and the set of runs depending on it
-- (unless they are still to be judged: settlePendingDependents deletes it
-- then).
local function dropRunKeys(base, runId)
  redis.call("DEL", KEY.runLog(base, runId), KEY.runPackedLog(base, runId), KEY.runAttempts(base, runId))
  if redis.call("HEXISTS", KEY.dependentsPending(base), runId) == 0 then redis.call("DEL", KEY.dependents(base, runId)) end
end
