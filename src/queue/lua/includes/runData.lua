-- @include jobKey

-- A run's job data, decoded ({} when it is not a JSON object).
local function runData(base, runId)
  local ok, data = pcall(cjson.decode, redis.call("HGET", jobKey(base, runId), "data") or "")
  if ok and type(data) == "table" then return data end
  return {}
end
