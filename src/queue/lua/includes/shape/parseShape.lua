-- @include shape/readShape

-- A shape as readShape reads it, read once per script call: a call meets
-- the same few shapes again and again (a batch of one shape staged, a claim
-- walking its candidates, each run indexed). Callers never change what it
-- gives.
local shapesRead = {}
local function parseShape(text)
  local known = shapesRead[text]
  if known == nil then
    known = readShape(text) or false
    shapesRead[text] = known
  end
  return known or nil
end
