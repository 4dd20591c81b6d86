-- The staged-index shape of a stored run: its "shape" field.
local function storedShape(runKey)
  return redis.call("HGET", runKey, "shape") or "none"
end
