-- @include amounts/compareAmounts
-- @include amounts/parseAmount

-- Whether another live worker that is not drained, nor running as many
-- runs as its --concurrency lets it, has the blocked head's worker share
-- free now (by amount: its claim places devices), so it can
-- start the head without preempting anything (it claims at once: a stage
-- or an end published `staged`). The first 256 live workers are looked at.
local function startsElsewhere(base, workersKey, name, head, clock)
  local names = {}
  for i, item in ipairs(head.own) do names[i] = item[1] end
  if #names == 0 then return false end
  for _, other in ipairs(redis.call("ZRANGEBYSCORE", workersKey, clock, "+inf", "LIMIT", 0, 256)) do
    local state = other ~= name and redis.call("HMGET", KEY.worker(base, other), "drained", "concurrency", "running")
    -- Drained, or running as many runs as it may: it claims nothing now.
    local most = state and tonumber(state[2] or "") or 0
    if state and not state[1] and not (most > 0 and (tonumber(state[3] or "") or 0) >= most) then
      local free = redis.call("HMGET", KEY.workerFree(base, other), unpack(names))
      local fits = true
      for i, item in ipairs(head.own) do
        if not free[i] or compareAmounts(item[2], parseAmount(free[i])) > 0 then
          fits = false
          break
        end
      end
      if fits then return true end
    end
  end
  return false
end
