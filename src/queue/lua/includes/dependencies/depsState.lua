-- @include lifecycle/isEnded
-- @include dependencies/depStatus
-- @include lifecycle/runData
-- @include arrays/arrayTally
-- @include arrays/arrayCause

-- Whether a run's dependencies (its job data's `after`: groups of run ids,
-- and of arrays, `arrays`, with a kind) are met. Kinds: "ok" every id
-- completed; "notok" every id ended otherwise (failed, timeout, lost,
-- canceled, rejected); "end" every id ended; "any" at least one id
-- completed. An array counts as one dependency, as Slurm judges a job array
-- (see arrayTally): "ok" when all its runs completed (never once one did
-- not), "notok" when all ended and one at least did not complete, "end"
-- when all ended; in an "any" group, any of its runs completing will do.
-- Returns "met"; "waiting" with the first dependency not ended yet and its
-- status; or "never" with the reason it can never be met ("dependency
-- abc123 failed (exit code 1)") and the dependency that failed it (an
-- array's cause, arrayCause; "" for an --after-any group).
local function depsState(base, runId)
  local after = runData(base, runId).after
  if type(after) ~= "table" then return "met" end
  local waitingFor, waitingStatus
  local describe = function(dep, status, reason)
    if status == "removed" then return "dependency " .. dep .. " was removed" end
    if reason ~= "" and reason ~= status then return "dependency " .. dep .. " " .. status .. " (" .. reason .. ")" end
    return "dependency " .. dep .. " " .. status
  end
  -- An array that did not complete: its last run that did not, as a run dependency is described.
  local describeArray = function(array, tally)
    local id, status, reason = string.match(tally.last, "^([^|]*)|([^|]*)|(.*)$")
    if not id then return "dependency array " .. array .. ": one of its runs did not complete" end
    return describe("array " .. array .. ": its run " .. id, status, reason)
  end
  for _, group in ipairs(after) do
    local ids = type(group.ids) == "table" and group.ids or {}
    local arrays = type(group.arrays) == "table" and group.arrays or {}
    if group.kind == "any" then
      local completed, pending, last = false, false, nil
      for _, dep in ipairs(ids) do
        local status, reason = depStatus(base, runId, dep)
        if status == "completed" then completed = true break end
        if isEnded(status) or status == "removed" then
          last = describe(dep, status, reason)
        else
          pending = true
          if not waitingFor then waitingFor, waitingStatus = dep, status end
        end
      end
      for _, array in ipairs(completed and {} or arrays) do
        local tally = arrayTally(base, array)
        if tally and tally.ok > 0 then completed = true break end
        if tally and tally.open > 0 then
          pending = true
          if not waitingFor then waitingFor, waitingStatus = arrayCause(array), "running" end
        else
          last = tally and ("dependency array " .. array .. ": none of its " .. tally.total .. " runs completed")
            or ("dependency array " .. array .. " was removed")
        end
      end
      if not completed and not pending then
        return "never", "no dependency of --after-any completed (last: " .. (last or "none") .. ")", ""
      end
    else
      for _, dep in ipairs(ids) do
        local status, reason = depStatus(base, runId, dep)
        if status == "removed" then return "never", describe(dep, status, reason), dep end
        if isEnded(status) then
          if group.kind == "ok" and status ~= "completed" then return "never", describe(dep, status, reason), dep end
          if group.kind == "notok" and status == "completed" then
            return "never", describe(dep, status, reason) .. ": --after-notok needs it to fail", dep
          end
        elseif not waitingFor then
          waitingFor, waitingStatus = dep, status
        end
      end
      for _, array in ipairs(arrays) do
        local tally, cause = arrayTally(base, array), arrayCause(array)
        if not tally then return "never", "dependency array " .. array .. " was removed", cause end
        if group.kind == "ok" and tally.notok > 0 then return "never", describeArray(array, tally), cause end
        if tally.open > 0 then
          if not waitingFor then waitingFor, waitingStatus = cause, "running" end
        elseif group.kind == "notok" and tally.notok == 0 then
          return "never", "dependency array " .. array .. ": all its " .. tally.total
            .. " runs completed: --after-notok needs one of them not to", cause
        end
      end
    end
  end
  if waitingFor then return "waiting", waitingFor, waitingStatus end
  return "met"
end
