-- @include bullmq/endedBefore
-- @include bullmq/endedCount
-- @include bullmq/oldestEnded
-- @include lifecycle/removeRun
-- @include namespace/serverNow
-- @include retention/retentionSettings

-- Most runs retention removes when one run ends: a backlog (after the limits
-- were lowered, or runs grown too old together) is cleared a batch per
-- ended run, so an end holds Redis a millisecond or so more at most (a
-- removal costs some 60 µs); `fitq runs clean` and `fitq retention` clear
-- it at once, in parts of their own.
local RETENTION_BATCH = 20

-- Applies retention to one ended state, "completed" or "failed" (which holds
-- failed, canceled, lost, rejected and timed-out runs): removes, oldest first, the runs
-- beyond the newest keepN and those that ended more than keepAgeMs ago (by
-- the server's clock), at most `limit` of them. A run marked staged or
-- running is never removed, nor `spare`: the run whose end this is, so
-- whoever waits for it reads how it ended (with a count of 0 it goes at the
-- next end). Returns how many it removed.
local function trimEndedRuns(base, state, limit, spare)
  local settings = retentionSettings(base)
  -- (Not `a and b or c`: a count that is off, nil, must not become the other state's.)
  local keep = settings.keepFailed
  if state == "completed" then keep = settings.keepCompleted end
  -- Both the runs beyond the count and the too old ones are a prefix of
  -- the state's runs, oldest end first: remove the longer prefix.
  local beyondKeep = keep and endedCount(base, state) - keep or 0
  local count = math.min(beyondKeep, limit)
  if settings.keepAgeMs and count < limit then
    local cutoff = string.format("%.0f", serverNow() - settings.keepAgeMs)
    count = math.max(count, #endedBefore(base, state, cutoff, limit))
  end
  if count <= 0 then return 0 end
  local removed = 0
  -- One more than the prefix is read: the spare, ending in the same
  -- millisecond as older runs, may sort among them; then, where the count
  -- alone decides the prefix (not the age, not the batch limit), the run
  -- after it goes in its place.
  local oldest = oldestEnded(base, state, count)
  local take = count
  for i, runId in ipairs(oldest) do
    if i > take then break end
    local status = redis.call("HGET", KEY.run(base, runId), "status")
    if runId == spare then
      if beyondKeep == count and count < limit then take = count + 1 end
    elseif status ~= "staged" and status ~= "running" then
      removeRun(base, runId, state)
      removed = removed + 1
    end
  end
  return removed
end
