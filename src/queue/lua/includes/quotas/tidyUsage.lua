-- Deletes a user's usage hash (usage:<user>) once it counts nothing: no
-- run running or not ended, nothing reserved. So a namespace whose runs
-- are all gone leaves no key of its users behind.
local function tidyUsage(key)
  local fields = redis.call("HGETALL", key)
  for i = 2, #fields, 2 do
    if fields[i] ~= "0" then return end
  end
  redis.call("DEL", key)
end
