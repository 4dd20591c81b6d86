#!lua
--[[
  Puts runs staged by an older fitq (before the order index) in the order
  index (`order:<block>`, see lifecycle/orderRun), a bounded step at a
  time: the next ARGV[3] run ids of `ids` after the position ARGV[2], in id
  order, each by the staging number its job hash holds (none: left out).
  Adding a run already there changes nothing.

  KEYS[1]  ids         zset of every run id, score 0: the lexicographic index

  ARGV[1] base; ARGV[2] position: the last id looked at ("" from the start);
  ARGV[3] most ids looked at

  Returns the last id looked at, "" when the walk reached the end.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (it only adds entries; the listing goes on without them).
]]
-- @include lifecycle/orderRun
-- @include namespace/tryCall
local idsKey = KEYS[1]
local base, position, most = ARGV[1], ARGV[2], tonumber(ARGV[3])
local ids = redis.call("ZRANGE", idsKey, position == "" and "-" or ("(" .. position), "+", "BYLEX", "LIMIT", 0, most)
for _, id in ipairs(ids) do
  -- (A key written by hand that is no hash holds no run.)
  local seq = tryCall("HGET", KEY.run(base, id), "seq")
  if type(seq) == "string" and tonumber(seq) then orderRun(base, id, seq) end
end
return #ids < most and "" or ids[#ids]
