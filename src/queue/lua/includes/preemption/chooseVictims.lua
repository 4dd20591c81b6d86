-- @include bullmq/priorityBand
-- @include preemption/freedFits
-- @include preemption/victimsFit
-- @include preemption/victimTerms

-- The runs of this worker to preempt so that its blocked head (`head`) can
-- start: the runs victimTerms lets go that have run their
-- `--preempt-after`, beside those being preempted already (`freeing`,
-- which count first).
-- The fewest runs, then the least work lost: the one most recently
-- started that frees enough alone; else the most recent ones, in turn,
-- until enough is free, then those started earliest dropped again while
-- enough stays free. Returns the new victims (none when those being
-- preempted free enough, nil when even every eligible run would not) and
-- the runs being preempted already, each {id, claim}; and, with nil, in
-- how many ms the next run of a lower band passes its --preempt-after
-- (nil if none will): the claim is tried again then.
local function chooseVictims(base, view, head, reservedKey, clock)
  local headBand = priorityBand(head.score)
  local freeing, eligible, soonest = {}, {}, nil
  local entries = redis.call("HGETALL", reservedKey)
  local byShare = view.fair.on and view.fair.settings.preempt
  for i = 1, #entries, 2 do
    -- Decoded only when it may matter: a run being preempted, a preemptible
    -- run of a lower band (its band read from the text first), or any run
    -- when runs over their user's share may be preempted.
    local text = entries[i + 1]
    local wanted = byShare or string.find(text, '"preempting"', 1, true)
    if not wanted and string.find(text, '"pre":', 1, true) then
      local band = tonumber(string.match(text, '"band":(%-?[%d%.eE%+]+)'))
      wanted = band == nil or band > headBand
    end
    local decoded, claim = false, nil
    if wanted then decoded, claim = pcall(cjson.decode, text) end
    if decoded and type(claim) == "table" then
      if claim.preempting then
        freeing[#freeing + 1] = {id = entries[i], claim = claim, at = clock}
      else
        local terms = victimTerms(base, view, head, headBand, entries[i], claim)
        if terms and terms.from <= clock then
          eligible[#eligible + 1] = {id = entries[i], claim = claim, at = terms.at}
        elseif terms and (soonest == nil or terms.from - clock < soonest) then
          soonest = terms.from - clock
        end
      end
    end
  end
  if freedFits(view, head, freeing) then return {}, freeing end
  if #eligible == 0 then return nil, freeing, soonest end
  table.sort(eligible, function(a, b)
    if a.at ~= b.at then return a.at > b.at end
    return a.id < b.id
  end)
  for _, victim in ipairs(eligible) do
    if victimsFit(view, head, freeing, {victim}) then return {victim}, freeing end
  end
  local chosen = {}
  for _, victim in ipairs(eligible) do
    chosen[#chosen + 1] = victim
    if victimsFit(view, head, freeing, chosen) then break end
  end
  if not victimsFit(view, head, freeing, chosen) then return nil, freeing, soonest end
  for i = #chosen, 1, -1 do
    local without = {}
    for j, victim in ipairs(chosen) do
      if j ~= i then without[#without + 1] = victim end
    end
    if victimsFit(view, head, freeing, without) then chosen = without end
  end
  return chosen, freeing
end
