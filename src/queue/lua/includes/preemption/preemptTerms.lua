-- @include lifecycle/runDataText

-- Whether a run is preemptible (staged --preemptible: its job data holds
-- `preempt`) and how long it must run before it may be (`preemptAfter`,
-- ms): {after = ms}, or nil. The data is decoded only when it names
-- `preempt`, so a claim of any other run pays one string search.
local function preemptTerms(base, runId)
  local data = runDataText(base, runId)
  if not data or not string.find(data, '"preempt"', 1, true) then return nil end
  local decoded, value = pcall(cjson.decode, data)
  if not decoded or type(value) ~= "table" or type(value.preempt) ~= "string" then return nil end
  return {after = tonumber(value.preemptAfter) or 0}
end
