-- @include amounts/parseAmount

-- "a=1 b=0.5" (a run's resources) or "a=1,b=0.5" (a shape) -> list of {name, amount}.
-- The shape "none" (no demands) gives an empty list.
local function parseResourceList(text)
  local list = {}
  for name, value in string.gmatch(text or "", "([^%s,=]+)=([^%s,]+)") do
    list[#list + 1] = {name, parseAmount(value)}
  end
  return list
end
