-- @include bullmq/followJob

-- Reconciling (see reconcileRuns), reads the queue's event stream after
-- `cursor` (the last entry read before; at most `count` entries) and looks
-- at the job of each `added` and `removed` event, and of each `waiting`
-- event from another state than active (retry, promote), with followJob;
-- a `cleaned` event names no job: a full pass must look at every job, as
-- when events were lost (the cursor is gone from the stream: trimmed, or the
-- stream deleted). Each other event costs a tenth of a job of the call's
-- budget. Returns the new cursor, whether a full pass must start, and
-- whether entries are left to read.
local function followEvents(r, cursor, count)
  local eventsKey = KEY.queueEvents(r.base)
  if cursor and #redis.call("XRANGE", eventsKey, cursor, cursor) == 0 then
    local last = redis.call("XREVRANGE", eventsKey, "+", "-", "COUNT", 1)[1]
    return last and last[1] or nil, true, false
  end
  local startPass = false
  local entries = redis.call("XRANGE", eventsKey, cursor and ("(" .. cursor) or "-", "+", "COUNT", count)
  for _, entry in ipairs(entries) do
    cursor = entry[1]
    local fields = entry[2]
    local event, jobId, prev
    for i = 1, #fields, 2 do
      local name = fields[i]
      if name == "event" then event = fields[i + 1] elseif name == "jobId" then jobId = fields[i + 1]
      elseif name == "prev" then prev = fields[i + 1] end
    end
    -- A `waiting` without `prev` follows an `added` of the same job; after
    -- `active` it is fitq's own re-staging.
    if jobId and (event == "added" or event == "removed" or (event == "waiting" and prev and prev ~= "active")) then
      followJob(r, jobId)
    elseif event == "cleaned" then
      startPass = true
    else
      r.work = r.work - 0.1
    end
  end
  return cursor, startPass, #entries == count
end
