-- Why the runs of a worker whose lease ran out end lost (or are re-staged).
local function leaseLapsedReason(name)
  return "worker " .. name .. " stopped renewing its lease"
end
