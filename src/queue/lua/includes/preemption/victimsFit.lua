-- @include preemption/freedFits

-- Whether the blocked head would start with what the runs being preempted
-- already (`freeing`) and the runs `chosen` give back (freedFits).
local function victimsFit(view, head, freeing, chosen)
  local all = {}
  for _, victim in ipairs(freeing) do all[#all + 1] = victim end
  for _, victim in ipairs(chosen) do all[#all + 1] = victim end
  return freedFits(view, head, all)
end
