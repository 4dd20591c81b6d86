-- The job hash field where BullMQ counts a job's starts, which activateJob
-- HINCRBYs: read with a run's other fields (one HMGET), then judged here.
local JOB_STARTS_FIELD = "ats"

-- Whether activateJob can count a job's start: its count of starts (the
-- value of JOB_STARTS_FIELD), is absent or an integer (a hand could have
-- written anything there, and a claim must never fail half done).
local function jobActivatable(starts)
  return not starts or (string.match(starts, "^%-?%d+$") ~= nil and #starts <= 15)
end
