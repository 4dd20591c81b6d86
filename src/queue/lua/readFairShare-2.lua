#!lua flags=no-writes
--[[
  `fitq share`: fair share as the claim sees it now (includes/fairshare/):
  the settings, and every user with usage or a share, in the order the
  claim puts them (least need first: decayed usage over share).

  KEYS[1]  fair-share   hash: settings (setFairShare-2.lua)
  KEYS[2]  fair-usage   hash: user -> usage

  ARGV[1] base

  Returns {on, halfLife, weights, users, preempt}: on is 1 when the claim orders by
  fair share (it is not off), halfLife in ms, weights a flat list of
  resource, weight (`run`: per running run), users a flat list of user,
  usage (decayed weighted resource-seconds), share, used (how much of their
  share: 1 is all of it), rank (0 first; users alike share one), rate (what
  their running runs add per second), preempt 1 when runs of users over
  their share may be preempted. Numbers are decimal strings.

  Flags: no-writes: it only reads.
]]
-- @include fairshare/fairOrder
-- @include fairshare/fairRank
-- @include fairshare/usedOfShare
-- @include namespace/serverNow
local fairShareKey = KEYS[1]
local fairUsageKey = KEYS[2]
local base = ARGV[1]
local order = fairOrder(base, serverNow())
local settings = order.settings
local number = function(value) return string.format("%.17g", value) end

local weights = {}
local names = {}
for name in pairs(settings.weights) do names[#names + 1] = name end
table.sort(names)
for _, name in ipairs(names) do
  weights[#weights + 1] = name
  weights[#weights + 1] = number(settings.weights[name])
end

local known = {}
local users = {}
for user in pairs(order.usage) do if not known[user] then known[user] = true; users[#users + 1] = user end end
for user in pairs(settings.shares) do if not known[user] then known[user] = true; users[#users + 1] = user end end
table.sort(users, function(a, b)
  local needA, needB = order.need[a] or 0, order.need[b] or 0
  if needA ~= needB then return needA < needB end
  return a < b
end)
local out = {}
for _, user in ipairs(users) do
  out[#out + 1] = user
  out[#out + 1] = number(order.usage[user] or 0)
  out[#out + 1] = number(settings.shares[user] or 1)
  out[#out + 1] = number(usedOfShare(order, user, users))
  out[#out + 1] = tostring(fairRank(order, user))
  out[#out + 1] = number(order.rate[user] or 0)
end
return {settings.on and 1 or 0, number(settings.halfLife), weights, out, settings.preempt and 1 or 0}
