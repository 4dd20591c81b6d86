-- @include classes/fitIndexOf
-- @include namespace/tryCall

-- What a read (explainRuns) takes of a worker class's fit indexes: the
-- groups whose index has caught up with them (catchUpClass) are walked in
-- it, so shapes too big for the worker cost nothing; the others in the
-- group itself. A read writes nothing, so it catches up with nothing.
local function useFitIndexes(base, class, stream)
  local flat = tryCall("HGETALL", KEY.fitClass(base, class.id)) or {}
  local caught = {}
  for i = 1, #flat, 2 do caught[flat[i]] = flat[i + 1] end
  for _, g in ipairs(stream.groups) do
    local fitKey, since = fitIndexOf(base, class.id, g.group, caught)
    if since == g.version then g.key, g.fitted, g.classId = fitKey, true, class.id end
  end
end
