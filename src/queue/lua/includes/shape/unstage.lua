-- @include bullmq/unqueueJob
-- @include shape/unindex

-- Removes a staged run from its shape's index (unindex) and its job from
-- BullMQ's staged order, or, if it was parked (see placeStaged), from
-- BullMQ's delayed or waiting-children (unqueueJob).
local function unstage(base, runId, shape)
  unindex(base, runId, shape)
  unqueueJob(base, runId)
end
