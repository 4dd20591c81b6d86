--[[
  Resolves run ids given in full or as a prefix of one.

  KEYS[1] runs   zset of every run id, scored by seq
  KEYS[2] ids    zset of every run id, score 0: the lexicographic index

  ARGV[1] base; ARGV[2] most candidates to return per reference;
  ARGV[3..] references (already validated as run id characters)

  Returns one list per reference: {id} when it names a run in full (even if
  it also prefixes others), else the runs it prefixes, in id order, at most
  ARGV[2] + 1 of them (so the caller can tell "more"); {} for none.
]]
local base, most = ARGV[1], tonumber(ARGV[2])

-- Runs staged before the index existed: rebuild it from the runs zset.
if redis.call("ZCARD", KEYS[1]) ~= redis.call("ZCARD", KEYS[2]) then
  redis.call("DEL", KEYS[2])
  local total = redis.call("ZCARD", KEYS[1])
  for start = 0, total - 1, 1000 do
    local args = {}
    for _, id in ipairs(redis.call("ZRANGE", KEYS[1], start, start + 999)) do
      args[#args + 1] = 0
      args[#args + 1] = id
    end
    if #args > 0 then redis.call("ZADD", KEYS[2], unpack(args)) end
  end
end

local replies = {}
for i = 3, #ARGV do
  local ref = ARGV[i]
  if redis.call("EXISTS", base .. "run:" .. ref) == 1 then
    replies[#replies + 1] = {ref}
  else
    -- Run ids use no character above "~", so "(ref~" ends the range of ids starting with ref.
    local found = {}
    for _, id in ipairs(redis.call("ZRANGE", KEYS[2], "[" .. ref, "(" .. ref .. "~", "BYLEX", "LIMIT", 0, most + 1)) do
      if redis.call("ZSCORE", KEYS[1], id) then found[#found + 1] = id end
    end
    replies[#replies + 1] = found
  end
end
return replies
