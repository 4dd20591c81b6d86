-- @include shape/parseShape
-- @include quotas/countOpenRun

-- A staged run whose job BullMQ deleted (drain, remove, obliterate) leaves
-- no user to read: its index entry, dropped, says whose it was (the shape's
-- `;u=`), and it no longer counts as not ended for them.
local function forgetStagedUserRun(base, shape)
  local parsed = parseShape(shape)
  if parsed and parsed.user then countOpenRun(base, parsed.user, -1) end
end
