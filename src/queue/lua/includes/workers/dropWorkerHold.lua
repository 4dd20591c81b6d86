-- Takes a worker's hold off its blocked head (if `holds` still says it is
-- the worker's), and clears what the worker's record says it holds or is
-- blocked by; true when a hold was dropped (other workers may hold it now).
local function dropWorkerHold(workerKey, holdsKey, name)
  local holding = redis.call("HGET", workerKey, "holding")
  redis.call("HDEL", workerKey, "holding", "blockedBy")
  if holding and redis.call("HGET", holdsKey, holding) == name then
    redis.call("HDEL", holdsKey, holding)
    return true
  end
  return false
end
