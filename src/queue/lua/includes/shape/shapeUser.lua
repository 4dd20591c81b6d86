-- A shape's text split at its user (";u=<user>" at its end, see
-- readShape): what comes before, and the user, or nil when it names none.
-- Cheap, for a claim ranking many shapes by their users (fairshare/fairKey)
-- without reading them whole; the user is not checked here.
local function shapeUser(text)
  local staged, user = string.match(text, "^(.*);u=([^;]*)$")
  return staged or text, user
end
