-- @include bullmq/prioritizedCount
-- @include namespace/tryCall
-- @include shape/groupNames
-- @include shape/parseShape

-- The staged runs of the fit index as /metrics shows them, at a cost that
-- grows neither with the number of shapes nor with the number of groups: the runs of at most `most`
-- shapes (flat shape, runs) and the runs of the whole index. Each group of
-- `groups` gets an equal share of `most` (a group with fewer shapes leaves
-- what it does not use to the others), filled with its first shapes in the
-- staged order (`group:<names>` scores a shape by its first run). Counting
-- every shape's runs is the only exact way to find the biggest, and costs
-- a call per shape. When every shape was read, the total is their sum;
-- else it is BullMQ's staged order (prioritized), which holds the runs of
-- the fit index (reconcileRuns-*.lua checks that the two agree).
local function stagedShapes(base, most)
  local groups = {}
  -- More groups than shapes to show (each its own resource names): the
  -- shapes of some of them, taken as an HSCAN gives them, not a ZCARD of
  -- each group.
  -- (A small hash is scanned whole at once, whatever COUNT says: at most
  -- `most` of what it gives.)
  local manyGroups = redis.call("HLEN", KEY.groups(base)) > most
  local fields = manyGroups and redis.call("HSCAN", KEY.groups(base), "0", "COUNT", most)[2] or redis.call("HGETALL", KEY.groups(base))
  for i = 1, math.min(#fields, 2 * math.max(most, 1)), 2 do
    if groupNames(fields[i]) then
      local key = KEY.group(base, fields[i])
      groups[#groups + 1] = {key = key, size = tryCall("ZCARD", key) or 0}
    end
  end
  table.sort(groups, function(a, b) return a.size < b.size end)
  local shapes, total, complete, left = {}, 0, true, most
  for i, group in ipairs(groups) do
    local take = math.min(group.size, math.floor(left / (#groups - i + 1)))
    if take < group.size then complete = false end
    left = left - take
    for _, shape in ipairs(take > 0 and tryCall("ZRANGE", group.key, 0, take - 1) or {}) do
      if parseShape(shape) then
        local runs = tryCall("ZCARD", KEY.staged(base, shape)) or 0
        shapes[#shapes + 1] = shape
        shapes[#shapes + 1] = runs
        total = total + runs
      end
    end
  end
  if manyGroups then complete = false end
  if not complete then total = math.max(total, prioritizedCount(base)) end
  return shapes, total
end
