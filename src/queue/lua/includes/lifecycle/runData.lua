-- @include lifecycle/runDataText

-- A run's job data as fitq wrote it, decoded ({} when it is not a JSON object).
local function runData(base, runId)
  local ok, data = pcall(cjson.decode, runDataText(base, runId) or "")
  if ok and type(data) == "table" then return data end
  return {}
end
