-- Whether activateJob can count a job's start: its count of starts (`ats`),
-- which it HINCRBYs, is absent or an integer (a hand could have written
-- anything there, and a claim must never fail half done).
local function jobActivatable(base, runId)
  local starts = redis.call("HGET", KEY.run(base, runId), "ats")
  return not starts or (string.match(starts, "^%-?%d+$") ~= nil and #starts <= 15)
end
