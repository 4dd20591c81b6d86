-- The array whose limit a pool resource is (`array.<id>`, the id as
-- stage.ts's newRunId makes array ids: 12 lowercase hex digits), or nil
-- (sweep.ts, arrayOfLimit, says the same).
local function arrayOfLimit(resource)
  local id = string.match(resource, "^array%.([0-9a-f]+)$")
  if id and #id == 12 then return id end
  return nil
end
