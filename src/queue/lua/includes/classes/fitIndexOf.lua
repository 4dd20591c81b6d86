-- @include namespace/tryCall

-- A class's fit index of a group (`fit:<class>|<names>`) and the group
-- version it caught up with (`caught`: the class's record, group ->
-- version), nil once the index is gone (expired: its end, "", is no more).
local function fitIndexOf(base, classId, group, caught)
  local fitKey = KEY.fitGroup(base, classId .. "|" .. group)
  local since = caught[group]
  if since and not tryCall("ZSCORE", fitKey, "") then since = nil end
  return fitKey, since
end
