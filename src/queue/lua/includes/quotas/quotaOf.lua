-- @include amounts/parseAmount
-- @include quotas/isUserOwner

-- The quota a user's runs count against (src/operations/quotas.ts sets
-- them): the user's own `quota:<user>`, else the namespace's default
-- `quota:.default`, else none (false); a project's (projectOwner): its
-- own, else none. Read once per owner per call, kept in
-- `cache` (owner -> quota): a claim meets the same few owners again and again.
-- A quota is {running = count or nil, staged = count or nil, resources =
-- {name -> amount}}; a field that is no amount (written by hand) limits
-- nothing.
local function quotaOf(base, cache, owner)
  local known = cache[owner]
  if known ~= nil then return known end
  local fields = redis.call("HGETALL", KEY.quota(base, owner))
  if #fields == 0 and isUserOwner(owner) then fields = redis.call("HGETALL", KEY.quota(base, ".default")) end
  known = false
  if #fields > 0 then
    known = {resources = {}}
    for i = 1, #fields, 2 do
      local field, value = fields[i], fields[i + 1]
      local count = string.match(value, "^%d+$") and tonumber(value)
      if field == "running" or field == "staged" then
        known[field] = count or nil
      else
        local name = string.match(field, "^res:(.+)$")
        if name and string.match(value, "^%d+%.?%d*$") then known.resources[name] = parseAmount(value) end
      end
    end
  end
  cache[owner] = known
  return known
end
