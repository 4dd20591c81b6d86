-- The BullMQ state a job is in (what its events call `prev`) for fitq's
-- status of its run: staged "waiting", running "active", completed
-- "completed", any other end "failed"; for a staged run parked because it
-- is held or waits for its dependencies ("held", "deps", see parkedState),
-- "waiting-children".
local function jobState(status)
  if status == "staged" then return "waiting" end
  if status == "running" then return "active" end
  if status == "completed" then return "completed" end
  if status == "held" or status == "deps" then return "waiting-children" end
  return "failed"
end
