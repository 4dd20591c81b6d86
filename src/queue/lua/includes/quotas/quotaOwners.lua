-- @include quotas/projectOwner

-- Whose quotas a run of a shape (as parseShape gives it) counts against:
-- its user's, then its project's (projectOwner). A run staged by an older fitq
-- names neither.
local function quotaOwners(parsed)
  local owners = {}
  if parsed.user then owners[#owners + 1] = parsed.user end
  if parsed.project then owners[#owners + 1] = projectOwner(parsed.project) end
  return owners
end
