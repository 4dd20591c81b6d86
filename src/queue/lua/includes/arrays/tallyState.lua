-- @include lifecycle/isEnded

-- Where a run with this status counts in its array's tally (arrayTally):
-- "ok" completed, "notok" ended otherwise, "open" not ended.
local function tallyState(status)
  if status == "completed" then return "ok" end
  if isEnded(status) then return "notok" end
  return "open"
end
