-- Whether a run's status is one it ended with (run-record.ts, ENDED_STATUSES;
-- test/queue/ended-statuses.test.ts keeps the two lists the same).
local function isEnded(status)
  return status == "completed" or status == "failed" or status == "canceled" or status == "lost"
    or status == "rejected" or status == "timeout"
end
