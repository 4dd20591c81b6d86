-- Drops what is left of a namespace once it holds nothing (no runs, no
-- workers, no pools): the staging counter and zeroed pool usage, so nothing
-- stays behind. With no run left no id or order position is in use, so the
-- next run staged may take seq 1 again.
local function forgetIfEmpty(base)
  if redis.call("EXISTS", base .. "runs", base .. "workers", base .. "pool:capacity") > 0 then return end
  local used = redis.call("HGETALL", base .. "pool:used")
  for i = 2, #used, 2 do
    if used[i] ~= "0" then return end
  end
  redis.call("DEL", base .. "seq", base .. "pool:used")
end
