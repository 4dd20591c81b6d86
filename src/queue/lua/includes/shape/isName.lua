-- Whether a shape's user or project is a name (src/resources/user-name.ts:
-- 1 to 64 of letters, digits and ._@+-, not starting with . @ + or -).
local function isName(text)
  return #text <= 64 and string.match(text, "^[A-Za-z0-9_][A-Za-z0-9._@+%-]*$") ~= nil
end
