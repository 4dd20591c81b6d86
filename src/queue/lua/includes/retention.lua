-- History retention: how many ended runs a namespace keeps and for how long
-- (its `settings` hash), and removing runs for good, which `removeRuns`,
-- `cleanRuns` and retention share.
-- @include jobs
-- @include clock

-- What a setting absent from `settings` means. src/queue/retention.ts
-- shows the same numbers (test/queue/retention.test.ts checks they agree).
local RETENTION_DEFAULTS = {keepCompleted = 10000, keepFailed = 10000, keepAgeMs = 604800000}

-- Most runs retention removes when one run ends: a backlog (after the limits
-- were lowered) is cleared a batch per ended run; `fitq runs clean` and
-- `fitq retention` clear it at once.
local RETENTION_BATCH = 100

-- Removes a run that is not staged (a staged one is unstaged first): its
-- job's keys and place in every state (deleteJob), its id, and BullMQ's
-- `removed` event, `prev` the state it was in.
local function removeRun(base, runId, prev)
  deleteJob(base, runId)
  emitEvent(base, "event", "removed", "jobId", runId, "prev", prev)
  redis.call("ZREM", base .. "ids", runId)
end

-- One limit of `settings`: "off" is no limit (nil); absent (HMGET's
-- false) or not a number from 0 up is the default.
local function retentionLimit(value, default)
  if value == "off" then return nil end
  local number = tonumber(value or "")
  if not number or number < 0 then return default end
  return number
end

-- The namespace's retention: {keepCompleted, keepFailed, keepAgeMs}, each a
-- number or nil for no limit. A count of 0 keeps none (see trimEndedRuns
-- for the run just ended); an age of 0 is no limit.
local function retentionSettings(base)
  local stored = redis.call("HMGET", base .. "settings", "keepCompleted", "keepFailed", "keepAgeMs")
  local ageMs = retentionLimit(stored[3], RETENTION_DEFAULTS.keepAgeMs)
  if ageMs and ageMs <= 0 then ageMs = nil end
  return {
    keepCompleted = retentionLimit(stored[1], RETENTION_DEFAULTS.keepCompleted),
    keepFailed = retentionLimit(stored[2], RETENTION_DEFAULTS.keepFailed),
    keepAgeMs = ageMs,
  }
end

-- Applies retention to one ended state, "completed" or "failed" (which holds
-- failed, canceled, lost and rejected runs): removes, oldest first, the runs
-- beyond the newest keepN and those that ended more than keepAgeMs ago (by
-- the server's clock), at most `limit` of them. A run marked staged or
-- running is never removed, nor `spare`: the run whose end this is, so
-- whoever waits for it reads how it ended (with a count of 0 it goes at the
-- next end). Returns how many it removed.
local function trimEndedRuns(base, state, limit, spare)
  local settings = retentionSettings(base)
  local keep = state == "completed" and settings.keepCompleted or settings.keepFailed
  local key = queueKey(base, state)
  -- Both the runs beyond the count and the too old ones are a prefix of
  -- the state's zset (score = finishedOn): remove the longer prefix.
  local count = 0
  if keep then count = math.min(redis.call("ZCARD", key) - keep, limit) end
  if settings.keepAgeMs and count < limit then
    local cutoff = string.format("%.0f", serverNow() - settings.keepAgeMs)
    -- (ZRANGEBYSCORE, not ZCOUNT: the commands fitq's ACL rule allows.)
    count = math.max(count, #redis.call("ZRANGEBYSCORE", key, "-inf", "(" .. cutoff, "LIMIT", 0, limit))
  end
  if count <= 0 then return 0 end
  local removed = 0
  for _, runId in ipairs(redis.call("ZRANGE", key, 0, count - 1)) do
    local status = redis.call("HGET", jobKey(base, runId), "status")
    if runId ~= spare and status ~= "staged" and status ~= "running" then
      removeRun(base, runId, state)
      removed = removed + 1
    end
  end
  return removed
end
