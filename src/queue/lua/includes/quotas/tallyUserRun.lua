-- @include namespace/tryCall
-- @include quotas/countOpenRun
-- @include quotas/projectOwner

-- A run moves `from` one state `to` another ("open": not ended, as
-- tallyState says; nil `from`: the run is new; nil `to`: removed): the
-- count of runs not ended (countOpenRun) of its user and of its project
-- (projectOwner) goes up or down. A run without a user
-- (staged by an older fitq) counts for no one.
local function tallyUserRun(base, runId, from, to)
  local delta = (to == "open" and 1 or 0) - (from == "open" and 1 or 0)
  if delta == 0 then return end
  -- (A key of another type, written by hand, counts for no one.)
  local run = tryCall("HMGET", KEY.run(base, runId), "user", "project")
  if type(run) ~= "table" then return end
  if type(run[1]) == "string" then countOpenRun(base, run[1], delta) end
  if type(run[2]) == "string" then countOpenRun(base, projectOwner(run[2]), delta) end
end
