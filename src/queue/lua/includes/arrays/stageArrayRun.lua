-- @include arrays/tallyArrayRun

-- Makes a run being staged part of an array: its job's `array` field, one
-- more run counted for the array in `arrays` and in its tally (open, see
-- arrayTally), and for an array with a limit (%N) the limit on its job
-- (`arrayLimit`, see restoreArrayLimit) and the array's pool resource
-- `array.<id>` of that capacity (unless the array has one already: a later
-- chunk, or `fitq pool set` changed it).
local function stageArrayRun(base, runId, array, limit)
  redis.call("HSET", KEY.run(base, runId), "array", array)
  redis.call("HINCRBY", KEY.arrays(base), array, 1)
  tallyArrayRun(base, runId, nil, "open")
  if limit ~= "" then
    redis.call("HSET", KEY.run(base, runId), "arrayLimit", limit)
    redis.call("HSETNX", KEY.poolCapacity(base), "array." .. array, limit)
  end
end
