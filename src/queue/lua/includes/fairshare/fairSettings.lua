-- @include namespace/tryCall

-- Fair share's defaults: usage halves every week; a second of a running
-- run counts 1, of a cpu 1, of a gpu 10 (any other resource 0 unless
-- weighed: `fitq share set --weight mem=...`).
local FAIR_HALF_LIFE_MS = 7 * 86400000
local FAIR_WEIGHTS = {run = 1, cpu = 1, gpu = 10}

-- The namespace's fair-share settings (`fair-share`, set by setFairShare):
-- whether the claim orders by it (`on`, unless `off` is set), whether
-- runs of users over their share may be preempted (`preempt`,
-- preemption/victimTerms), the
-- half-life (ms), the epoch usage is scaled from (nil before any run
-- started), weights (resource, or `run` -> per second) and users' shares
-- (user -> share, 1 for a user without one). A field that is no number
-- (written by hand) counts for nothing.
local function fairSettings(base)
  local flat = tryCall("HGETALL", KEY.fairShare(base)) or {}
  local settings = {on = true, halfLife = FAIR_HALF_LIFE_MS, weights = {}, shares = {}}
  for name, weight in pairs(FAIR_WEIGHTS) do settings.weights[name] = weight end
  for i = 1, #flat, 2 do
    local field, number = flat[i], tonumber(flat[i + 1])
    if field == "off" then
      settings.on = false
    elseif field == "preempt" then
      settings.preempt = true
    elseif number and number == number and number >= 0 and number < math.huge then
      local kind, name = string.match(field, "^(%a+):(.+)$")
      if field == "halfLife" and number > 0 then settings.halfLife = number
      elseif field == "epoch" then settings.epoch = number
      elseif kind == "w" then settings.weights[name] = number
      elseif kind == "share" and number > 0 then settings.shares[name] = number
      end
    end
  end
  return settings
end
