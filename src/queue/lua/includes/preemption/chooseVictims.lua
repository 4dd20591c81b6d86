-- @include bullmq/priorityBand
-- @include preemption/freedFits
-- @include preemption/victimsFit

-- The runs of this worker to preempt so that its blocked head (`head`) can
-- start: preemptible runs (their claim's `pre`, claims/takeRun) of a lower
-- priority band than the head's that have run their `--preempt-after`,
-- beside those being preempted already (`freeing`, which count first).
-- The fewest runs, then the least work lost: the one most recently
-- started that frees enough alone; else the most recent ones, in turn,
-- until enough is free, then those started earliest dropped again while
-- enough stays free. Returns the new victims (none when those being
-- preempted free enough, nil when even every eligible run would not) and
-- the runs being preempted already, each {id, claim}; and, with nil, in
-- how many ms the next run of a lower band passes its --preempt-after
-- (nil if none will): the claim is tried again then.
local function chooseVictims(view, head, reservedKey, clock)
  local headBand = priorityBand(head.score)
  local freeing, eligible, soonest = {}, {}, nil
  local entries = redis.call("HGETALL", reservedKey)
  for i = 1, #entries, 2 do
    -- Only the records of preemptible runs are decoded.
    local decoded, claim = false, nil
    if string.find(entries[i + 1], '"pre":', 1, true) then decoded, claim = pcall(cjson.decode, entries[i + 1]) end
    local pre = decoded and type(claim) == "table" and claim.pre
    if type(pre) == "table" then
      local victim = {id = entries[i], claim = claim, at = tonumber(pre.at) or clock}
      if claim.preempting then
        freeing[#freeing + 1] = victim
      elseif (tonumber(pre.band) or -math.huge) > headBand then
        local from = victim.at + (tonumber(pre.after) or 0)
        if from <= clock then
          eligible[#eligible + 1] = victim
        elseif soonest == nil or from - clock < soonest then
          soonest = from - clock
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
