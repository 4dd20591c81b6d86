-- @include retention/retentionLimit

-- What a setting absent from `settings` (the namespace's history retention:
-- how many ended runs it keeps and for how long) means. src/queue/retention.ts
-- shows the same numbers (test/queue/retention.test.ts checks they agree).
local RETENTION_DEFAULTS = {keepCompleted = 10000, keepFailed = 10000, keepAgeMs = 604800000}

-- The namespace's retention: {keepCompleted, keepFailed, keepAgeMs}, each a
-- number or nil for no limit. A count of 0 keeps none (see trimEndedRuns
-- for the run just ended); an age of 0 is no limit.
local function retentionSettings(base)
  local stored = redis.call("HMGET", KEY.settings(base), "keepCompleted", "keepFailed", "keepAgeMs")
  local ageMs = retentionLimit(stored[3], RETENTION_DEFAULTS.keepAgeMs)
  if ageMs and ageMs <= 0 then ageMs = nil end
  return {
    keepCompleted = retentionLimit(stored[1], RETENTION_DEFAULTS.keepCompleted),
    keepFailed = retentionLimit(stored[2], RETENTION_DEFAULTS.keepFailed),
    keepAgeMs = ageMs,
  }
end
