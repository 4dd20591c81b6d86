-- @include batches/batchState

-- Counts a run of an uncommitted batch as gone (removed by the stager
-- that gives the batch up, or by a claim once its deadline passed); the
-- batch leaves `batches` with its last run, so nothing stays behind.
local function batchRunGone(base, batchId)
  local state, deadline, count = batchState(base, batchId)
  if not state then return end
  if count <= 1 then
    redis.call("HDEL", KEY.batches(base), batchId)
  else
    redis.call("HSET", KEY.batches(base), batchId, deadline .. " " .. (count - 1))
  end
end
