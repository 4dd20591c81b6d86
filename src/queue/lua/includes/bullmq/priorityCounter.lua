-- BullMQ's priority counter (`pc`, "" when absent): an add, retry,
-- changePriority or promote by BullMQ moves it; fitq never touches it.
local function priorityCounter(base)
  return redis.call("GET", KEY.queuePc(base)) or ""
end
