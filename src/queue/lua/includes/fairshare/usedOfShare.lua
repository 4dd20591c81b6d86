-- How much of their share a user has used (fairOrder): their part of all
-- users' decayed usage over their part of the shares of those users, of
-- the users in `also` (a list: users without usage that are to count,
-- such as one whose runs wait) and of the user (1: as much as their
-- share; 3.2: 3.2 times it; 0: nothing). What `fitq share` and a run's
-- why-waiting line show.
local function usedOfShare(order, user, also)
  local total, shares = 0, 0
  for name, usage in pairs(order.usage) do
    total = total + usage
    shares = shares + (order.settings.shares[name] or 1)
  end
  local counted = {}
  for _, name in ipairs(also) do
    if order.usage[name] == nil and not counted[name] and name ~= user then
      counted[name] = true
      shares = shares + (order.settings.shares[name] or 1)
    end
  end
  if order.usage[user] == nil then shares = shares + (order.settings.shares[user] or 1) end
  if total == 0 then return 0 end
  return ((order.usage[user] or 0) / total) / ((order.settings.shares[user] or 1) / shares)
end
