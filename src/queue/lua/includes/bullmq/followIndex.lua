-- @include quotas/forgetStagedUserRun
-- @include bullmq/followJob
-- @include namespace/tryCall
-- @include shape/groupNames
-- @include shape/indexShape
-- @include shape/parseShape

-- What one entry of the fit index costs of the call's budget (an EXISTS),
-- and one shape looked at, or one scan of `groups` or a group.
local INDEX_ENTRY_COST = 0.25
local INDEX_SCAN_COST = 1
-- The COUNT hint of each HSCAN of `groups` and ZSCAN of a group.
local INDEX_SCAN_COUNT = 50

-- Reconciling (see reconcileRuns), the sweep of the fit index: every entry
-- of every `staged:<shape>`, shape by shape, group by group, as far as
-- `work` goes, from `position`; an entry whose job is gone (BullMQ removed
-- it: job.remove, drain, clean, obliterate) leaves the index, and fitq
-- forgets the run (followJob) if it still knew it. Whatever BullMQ removed
-- leaves no trace that says which shape held it, so a removal is followed
-- by a sweep, not by a look at every shape. `groups` and each group are
-- walked with HSCAN and ZSCAN, which return every member that stays for
-- the whole walk however others come and go; a shape's runs by score after
-- the last one looked at (a run staged meanwhile before it is a live one).
-- `position` is "<groups cursor>|<groups to walk>|<group>|<its cursor>|<its
-- shapes to walk>|<last score>", lists space separated (names and shapes
-- hold no space: groupNames, parseShape), a cursor "" when its scan is done;
-- "0|||||" starts. Returns where it stopped, nil when the sweep is done.
local function followIndex(r, position, work)
  local base = r.base
  local groupsCursor, groupList, group, groupCursor, shapeList, after =
    string.match(position, "^([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)$")
  if not groupsCursor then groupsCursor, groupList, group, groupCursor, shapeList, after = "0", "", "", "", "", "" end
  local groups, shapes = {}, {}
  for name in string.gmatch(groupList, "%S+") do groups[#groups + 1] = name end
  for shape in string.gmatch(shapeList, "%S+") do shapes[#shapes + 1] = shape end
  local done = false
  while work > 0 and not done do
    if #shapes > 0 then
      local shape = shapes[1]
      local key = KEY.staged(base, shape)
      local limit = math.max(1, math.floor(work / INDEX_ENTRY_COST))
      local entries = tryCall("ZRANGE", key, after == "" and "-inf" or ("(" .. after), "+inf", "BYSCORE", "LIMIT", 0, limit, "WITHSCORES") or {}
      work = work - INDEX_ENTRY_COST
      local dropped, looked = false, 0
      for i = 1, #entries, 2 do
        -- (A run forgotten costs what a job looked at does: the budget may end mid-batch.)
        if work <= 0 then break end
        local runId = entries[i]
        after = entries[i + 1]
        looked = looked + 2
        work = work - INDEX_ENTRY_COST
        if redis.call("EXISTS", KEY.run(base, runId)) == 0 then
          if redis.call("ZSCORE", KEY.ids(base), runId) then
            followJob(r, runId)
            work = work - 1
          end
          forgetStagedUserRun(base, shape)
          redis.call("ZREM", key, runId)
          dropped = true
        end
      end
      if dropped then indexShape(base, shape) end
      if looked == #entries and #entries < 2 * limit then
        table.remove(shapes, 1)
        after = ""
      end
    elseif group ~= "" and groupCursor ~= "" then
      local reply = tryCall("ZSCAN", KEY.group(base, group), groupCursor, "COUNT", INDEX_SCAN_COUNT) or {"0", {}}
      work = work - INDEX_SCAN_COST
      for i = 1, #reply[2], 2 do
        if parseShape(reply[2][i]) then shapes[#shapes + 1] = reply[2][i] end
      end
      groupCursor = reply[1] == "0" and "" or reply[1]
    elseif #groups > 0 then
      group, groupCursor = table.remove(groups, 1), "0"
    elseif groupsCursor ~= "" then
      local reply = redis.call("HSCAN", KEY.groups(base), groupsCursor, "COUNT", INDEX_SCAN_COUNT)
      work = work - INDEX_SCAN_COST
      for i = 1, #reply[2], 2 do
        if groupNames(reply[2][i]) then groups[#groups + 1] = reply[2][i] end
      end
      groupsCursor = reply[1] == "0" and "" or reply[1]
      group = ""
    else
      done = true
    end
  end
  if done then return nil end
  return table.concat({groupsCursor, table.concat(groups, " "), group, groupCursor, table.concat(shapes, " "), after}, "|")
end
