-- Whether a quota owner is a user (not a project: projectOwner). Only users
-- have a default quota and fair share.
local function isUserOwner(owner)
  return not string.find(owner, "=", 1, true)
end
