-- One limit of `settings`: "off" is no limit (nil); absent (HMGET's
-- false) or not a number from 0 up is the default.
local function retentionLimit(value, default)
  if value == "off" then return nil end
  local number = tonumber(value or "")
  if not number or number < 0 then return default end
  return number
end
