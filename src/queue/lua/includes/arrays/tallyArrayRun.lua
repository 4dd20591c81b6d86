-- @include namespace/tryCall
-- @include arrays/arrayTally
-- @include arrays/arrayCause

-- A run of an array moves in its array's tally (see arrayTally) `from` one
-- state `to` another ("open", "ok", "notok"; `from` nil: the run is new;
-- `to` "notok" for a run removed before it ended); `status` and `reason`
-- are what it ended with ("notok": they become the tally's `last`).
-- Returns the array's cause (arrayCause) when what the runs waiting for the
-- array may conclude changed (all its runs ended, one completed, one did
-- not) and some do wait for it, else nil. A run of an array fitq does not
-- count (staged by an older fitq) changes nothing.
local function tallyArrayRun(base, runId, from, to, status, reason)
  local array = tryCall("HGET", KEY.run(base, runId), "array")
  if type(array) ~= "string" or from == to then return nil end
  local key = KEY.arrayTally(base)
  local before = arrayTally(base, array)
  if from ~= nil and before == nil then return nil end
  if before == nil then
    redis.call("HSET", key, array .. ":open", 0, array .. ":ok", 0, array .. ":notok", 0)
  end
  if from ~= nil then redis.call("HINCRBY", key, array .. ":" .. from, -1) end
  redis.call("HINCRBY", key, array .. ":" .. to, 1)
  if to == "notok" then redis.call("HSET", key, array .. ":last", runId .. "|" .. (status or "") .. "|" .. (reason or "")) end
  local after = arrayTally(base, array)
  before = before or {open = 0, ok = 0, notok = 0}
  if (before.open == 0) == (after.open == 0) and (before.ok > 0) == (after.ok > 0)
      and (before.notok > 0) == (after.notok > 0) then
    return nil
  end
  local cause = arrayCause(array)
  if redis.call("SCARD", KEY.dependents(base, cause)) == 0 then return nil end
  return cause
end
