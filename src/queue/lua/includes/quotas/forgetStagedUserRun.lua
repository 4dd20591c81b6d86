-- @include shape/parseShape
-- @include quotas/countOpenRun
-- @include quotas/quotaOwners

-- A staged run whose job BullMQ deleted (drain, remove, obliterate) leaves
-- no user to read: its index entry, dropped, says whose it was (the shape's
-- `;u=` and `;p=`: quotaOwners), and it no longer counts as not ended for
-- them.
local function forgetStagedUserRun(base, shape)
  local parsed = parseShape(shape)
  for _, owner in ipairs(parsed and quotaOwners(parsed) or {}) do countOpenRun(base, owner, -1) end
end
