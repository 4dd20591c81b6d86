-- @include classes/classFits
-- @include classes/fitIndexOf
-- @include classes/parkedField
-- @include shape/parseShape
-- @include namespace/tryCall

-- A fit index lasts a week from when it was begun; then it is built again
-- (an unused class leaves nothing behind for long).
local FIT_INDEX_TTL_MS = 7 * 86400000

-- Points each group a claim walks (stream.groups, see candidateStream) at
-- its class's fit index (`fit:<class>|<names>`: the group's shapes that fit
-- the class, classFits, scored as in the group) once that index has caught
-- up with the group's log (indexShape): the shapes logged after the
-- group version it caught up with (`fit-class:<class>`: group -> version),
-- each added with its score or taken out, `budget` log entries at most per
-- call. A fit index begins with the member "" scored +inf (its end, which
-- the walk never takes): one that has expired is seen to be gone, and
-- catches up again from the start. A group whose log began before fitq kept
-- logs (no "" in it) keeps walking the group itself. Returns false when log entries are left
-- for a later call.
local function catchUpClass(base, class, stream, budget)
  local classKey = KEY.fitClass(base, class.id)
  local caught = {}
  local flat = tryCall("HGETALL", classKey)
  -- (A key of another type, written by hand, would never record what was caught up.)
  if not flat then redis.call("DEL", classKey) end
  flat = flat or {}
  for i = 1, #flat, 2 do caught[flat[i]] = flat[i + 1] end
  -- Shapes of arrays at their limit are out of the indexes (unparkArray): their runs wait.
  if (tonumber(caught[parkedField()] or "") or 0) > 0 then stream.throttled = true end
  local complete = true
  for _, g in ipairs(stream.groups) do
    local fitKey, since = fitIndexOf(base, class.id, g.group, caught)
    if since == g.version then
      g.key, g.fitted, g.classId = fitKey, true, class.id
    elseif tryCall("ZSCORE", KEY.groupLog(base, g.group), "") then
      if budget <= 0 then
        complete = false
      else
        local entries = tryCall("ZRANGEBYSCORE", KEY.groupLog(base, g.group), "(" .. (since or "-inf"), "+inf",
          "WITHSCORES", "LIMIT", 0, budget) or {}
        -- From the start: what an expired or older index held goes.
        if not since then
          redis.call("DEL", fitKey)
          redis.call("ZADD", fitKey, "+inf", "")
          -- (It goes with the group: forgetFitIndexes.)
          tryCall("SADD", KEY.groupClasses(base, g.group), class.id)
        end
        for i = 1, #entries, 2 do
          local shape = entries[i]
          if shape ~= "" then
            local score = tryCall("ZSCORE", g.key, shape)
            local parsed = score and parseShape(shape)
            if parsed and parsed.group == g.group and classFits(class, shape, parsed) then
              redis.call("ZADD", fitKey, score, shape)
            else
              redis.call("ZREM", fitKey, shape)
            end
          end
        end
        local read = #entries / 2
        if read < budget then
          -- The whole log is in: caught up with the group's version.
          redis.call("HSET", classKey, g.group, g.version)
          g.key, g.fitted, g.classId = fitKey, true, class.id
        else
          if read > 0 then redis.call("HSET", classKey, g.group, entries[#entries]) end
          complete = false
        end
        budget = budget - read
        if not since then
          redis.call("PEXPIRE", fitKey, FIT_INDEX_TTL_MS)
          redis.call("PEXPIRE", classKey, FIT_INDEX_TTL_MS)
        end
      end
    end
  end
  return complete
end
