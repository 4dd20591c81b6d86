-- Whether a worker's lease has not run out by `clock`.
local function liveWorker(workersKey, name, clock)
  local until_ = redis.call("ZSCORE", workersKey, name)
  return until_ ~= false and tonumber(until_) >= clock
end
