-- The resource names of a group (see parseShape), or nil when it is no group
-- fitq writes (a field of `groups` written by hand).
local function groupNames(group)
  if group == "none" then return {} end
  local names = {}
  for name in string.gmatch(group .. ",", "([^,]*),") do
    if #name > 64 or not string.find(name, "^[A-Za-z][A-Za-z0-9_.%-]*$") then return nil end
    names[#names + 1] = name
  end
  return names
end
