-- The job hash of a run, in the namespace's BullMQ queue (`<base>runs`).
local function jobKey(base, runId) return base .. "runs:" .. runId end
