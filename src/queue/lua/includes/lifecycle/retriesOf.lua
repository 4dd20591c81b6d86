-- @include lifecycle/runDataText

-- How often a run may be re-staged: the `retries` of its job data (0 for data
-- fitq did not write).
local function retriesOf(base, runId)
  local ok, data = pcall(cjson.decode, runDataText(base, runId) or "")
  if ok and type(data) == "table" then return tonumber(data.retries) or 0 end
  return 0
end
