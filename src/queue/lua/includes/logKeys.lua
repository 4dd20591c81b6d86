-- @include jobKey

-- A run's log: a stream next to its job while the run may still print, or,
-- once it ended with little output, the same entries packed into one string
-- (see packLog). Returns both keys: stream, packed.
local function logKeys(base, runId)
  local streamKey = jobKey(base, runId) .. ":output"
  return streamKey, streamKey .. ":packed"
end
