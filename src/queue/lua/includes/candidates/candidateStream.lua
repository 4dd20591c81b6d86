-- @include arrays/arrayOfLimit
-- @include shape/groupNames
-- @include candidates/noteDrop
-- @include candidates/throttled
-- @include fairshare/fairKey

-- The groups of shapes (`groups`, see parseShape) a worker may run: those
-- whose every resource it or the pool has, for nextCandidate to walk,
-- oldest shape first. A group it cannot run costs nothing more: its shapes
-- are never looked at. Also returns those groups, as "group|missing,names|
-- version" (version changing when runs of the group come or go). A group
-- indexed by an older fitq, whose groups held arrays' limits, of an array
-- at its limit (throttled) is passed over, as if it had no staged run
-- (stream.throttled says there was one); nextCandidate passes over the
-- shapes of such arrays in the groups of now. A field of
-- `groups` that is no group is noted in view.drops.
local function candidateStream(view)
  local stream = {view = view, groups = {}, pending = {}, horizon = fairKey(view.fair, math.huge), seen = false}
  local ignored = {}
  local fields = redis.call("HGETALL", KEY.groups(view.base))
  for i = 1, #fields, 2 do
    local group = fields[i]
    local names = groupNames(group)
    if not names then
      noteDrop(view.drops, {kind = "group", member = group, why = "not a group of resource names"})
    else
      local missing, arrays = {}, {}
      for _, name in ipairs(names) do
        if view.capacity[name] == nil and view.pool.capacity[name] == nil then missing[#missing + 1] = name end
        -- (A group indexed by an older fitq holds arrays' limits.)
        arrays[#arrays + 1] = arrayOfLimit(name)
      end
      if #missing > 0 then
        ignored[#ignored + 1] = group .. "|" .. table.concat(missing, ",") .. "|" .. fields[i + 1]
      elseif throttled(view.pool, arrays) then
        stream.throttled = true
      else
        stream.groups[#stream.groups + 1] = {
          group = group, names = names, key = KEY.group(view.base, group), groupKey = KEY.group(view.base, group),
          version = fields[i + 1], entries = {}, pos = 1, offset = 0,
        }
      end
    end
  end
  return stream, ignored
end
