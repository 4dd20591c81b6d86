#!lua
--[[
  `fitq share set|rm|reset`: changes fair share (includes/fairshare/), in
  one step. The settings are the hash `fair-share`: `preempt` (runs of users
  over their share may be preempted, includes/preemption/victimTerms.lua),
  `off` (the claim orders
  by priority and age alone), `halfLife` (ms), `w:<resource>` (weight per
  unit per second; `w:run`, per running run), `share:<user>` (a user's
  share; 1 without one) and `epoch` (what usage is scaled from, fitq's own).
  Users' usage is `fair-usage`: user -> "<scaled>,<at>,<rate>".

  KEYS[1]  fair-share   hash: the settings above
  KEYS[2]  fair-usage   hash: user -> usage (includes/fairshare/readFairUsage.lua)

  ARGV[1] base, then changes, each an op and its two arguments:
    set FIELD VALUE    sets a setting (values checked by src/operations/fair-share.ts)
    del FIELD ""       removes one (back to its default)
    halfLife MS ""     a new half-life: every user's usage is first brought
                       to now under the old one (rebaseUsage), so what was
                       used keeps its weight and decays at the new rate from now
    forget USER ""     forgets a user's usage ("" for every user's); what
                       their running runs hold counts again from now

  Returns {CODE.ok}. Workers are told (`poolReleased`): the order may have
  changed.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory.
]]
-- @include fairshare/fairSettings
-- @include fairshare/rebaseUsage
-- @include fairshare/usageRate
-- @include fairshare/writeFairUsage
-- @include namespace/publish
-- @include namespace/serverNow
local fairShareKey = KEYS[1]
local fairUsageKey = KEYS[2]
local base = ARGV[1]

for i = 2, #ARGV, 3 do
  local op, field, value = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if op == "set" then
    redis.call("HSET", fairShareKey, field, value)
  elseif op == "del" then
    redis.call("HDEL", fairShareKey, field)
  elseif op == "halfLife" then
    local settings = fairSettings(base)
    local halfLife = tonumber(field)
    if settings.epoch then rebaseUsage(base, settings, serverNow(), halfLife) end
    redis.call("HSET", fairShareKey, "halfLife", field)
  elseif op == "forget" then
    local settings = fairSettings(base)
    local now = serverNow()
    local users = {field}
    if field == "" then
      users = {}
      local flat = redis.call("HGETALL", fairUsageKey)
      for j = 1, #flat, 2 do users[#users + 1] = flat[j] end
    end
    for _, user in ipairs(users) do
      if settings.epoch then
        writeFairUsage(base, settings, user, 0, now, usageRate(base, settings, user))
      else
        redis.call("HDEL", fairUsageKey, user)
      end
    end
  end
end
publish(base, {type = "poolReleased"})
return {CODE.ok}
