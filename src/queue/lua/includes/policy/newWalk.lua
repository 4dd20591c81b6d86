-- A walk through a worker's candidates, oldest first, as one claim makes
-- it: the blocked head so far, what it holds of the worker (`held`, by
-- amount), of the pool (`heldPool`) and of the devices (`spare`: a pinned
-- head's; `headDevices`: an unpinned head's placement).
local function newWalk(view, policy)
  return {view = view, fifo = policy == "fifo", spare = {}}
end
