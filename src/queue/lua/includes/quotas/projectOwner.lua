-- The quota owner of a project, as `quota:<owner>` and `usage:<owner>` name
-- it: `project=<name>` (src/model/project.ts, projectOwner), never a user's
-- name, which holds no "=" (isUserOwner).
local function projectOwner(project)
  return "project=" .. project
end
