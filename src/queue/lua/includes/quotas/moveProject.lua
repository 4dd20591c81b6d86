-- @include shape/parseShape
-- @include quotas/countOpenRun
-- @include quotas/projectOwner

-- A staged or held run edited into another project (`fitq update --label
-- project=…`, its new shape's `;p=`): its `project` field, and which
-- project counts it as not ended (a `staged` quota bounds that), follow.
-- A staged quota does not refuse an edit: it bounds what is staged.
local function moveProject(base, runId, shape)
  local key = KEY.run(base, runId)
  local before = redis.call("HGET", key, "project") or nil
  local parsed = parseShape(shape)
  local after = parsed and parsed.project or nil
  if before == after then return end
  if before then countOpenRun(base, projectOwner(before), -1) end
  if after then
    redis.call("HSET", key, "project", after)
    countOpenRun(base, projectOwner(after), 1)
  else
    redis.call("HDEL", key, "project")
  end
end
