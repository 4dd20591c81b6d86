-- @include amounts/formatAmount

-- A shape (as parseShape gives it) as fitq writes it (src/resources/shape.ts,
-- formatShape): its demands "name=amount" joined by commas, or "none"; then
-- ";gpus=" and the devices its runs are pinned to, if any; then ";t=" and
-- their time limit in ms, if any; then ";p=" and their project, if any;
-- then ";u=" and who staged them, if known.
local function formatShape(shape)
  local parts = {}
  for _, item in ipairs(shape.demand) do parts[#parts + 1] = item[1] .. "=" .. formatAmount(item[2]) end
  local text = #parts == 0 and "none" or table.concat(parts, ",")
  if #shape.pinned > 0 then text = text .. ";gpus=" .. table.concat(shape.pinned, ",") end
  if shape.limit then text = text .. ";t=" .. string.format("%.0f", shape.limit) end
  if shape.project then text = text .. ";p=" .. shape.project end
  if shape.user then text = text .. ";u=" .. shape.user end
  return text
end
