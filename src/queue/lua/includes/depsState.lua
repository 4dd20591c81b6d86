-- @include isEnded
-- @include depStatus
-- @include runData

-- Whether a run's dependencies (its job data's `after`: groups of run ids
-- with a kind) are met. Kinds: "ok" every id completed; "notok" every id
-- ended otherwise (failed, timeout, lost, canceled, rejected); "end" every
-- id ended; "any" at least one id completed. Returns "met"; "waiting" with
-- the first dependency not ended yet and its status; or "never" with the
-- reason it can never be met ("dependency abc123 failed (exit code 1)") and
-- the dependency that failed it ("" for an --after-any group).
local function depsState(base, runId)
  local after = runData(base, runId).after
  if type(after) ~= "table" then return "met" end
  local waitingFor, waitingStatus
  local describe = function(dep, status, reason)
    if status == "removed" then return "dependency " .. dep .. " was removed" end
    if reason ~= "" and reason ~= status then return "dependency " .. dep .. " " .. status .. " (" .. reason .. ")" end
    return "dependency " .. dep .. " " .. status
  end
  for _, group in ipairs(after) do
    local ids = type(group.ids) == "table" and group.ids or {}
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
    end
  end
  if waitingFor then return "waiting", waitingFor, waitingStatus end
  return "met"
end
