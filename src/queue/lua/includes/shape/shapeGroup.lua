-- @include shape/splitShape

-- The group of a shape: the names of the resources its runs demand, in the
-- shape's order (sorted), joined by commas ("cpu=1,mem=2;gpus=0" ->
-- "cpu,mem"); "none" for a shape without demands. A worker that lacks one
-- of them (and the pool too) can run no shape of the group.
local function shapeGroup(shape)
  local demands = splitShape(shape)
  local names = {}
  for name in string.gmatch(demands, "([^,=]+)=") do names[#names + 1] = name end
  if #names == 0 then return "none" end
  return table.concat(names, ",")
end
