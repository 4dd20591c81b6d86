-- @include namespace/tryCall
-- @include quotas/countOpenRun

-- A run moves `from` one state `to` another ("open": not ended, as
-- tallyState says; nil `from`: the run is new; nil `to`: removed): its
-- user's count of runs not ended (countOpenRun) goes up or down. A run
-- without a user (staged by an older fitq) counts for no one.
local function tallyUserRun(base, runId, from, to)
  local delta = (to == "open" and 1 or 0) - (from == "open" and 1 or 0)
  if delta == 0 then return end
  -- (A key of another type, written by hand, counts for no one.)
  local user = tryCall("HGET", KEY.run(base, runId), "user")
  if type(user) ~= "string" then return end
  countOpenRun(base, user, delta)
end
