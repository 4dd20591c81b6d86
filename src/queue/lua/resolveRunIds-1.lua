#!lua flags=no-writes
--[[
  Resolves run ids given in full or as a prefix of one.

  KEYS[1]  ids         zset of every run id, score 0: the lexicographic index

  ARGV[1] base; ARGV[2] most candidates to return per reference;
  ARGV[3..] references (already validated as run id characters)

  Returns one list per reference: {id} when it names a run in full (even if
  it also prefixes others), else the runs it prefixes, in id order, at most
  ARGV[2] + 1 of them (so the caller can tell "more"); {} for none.

  Flags: no-writes: it only reads, so it runs while Redis is out of memory
  and on a read-only replica.
]]
local idsKey = KEYS[1]
local base, most = ARGV[1], tonumber(ARGV[2])
local replies = {}
for i = 3, #ARGV do
  local ref = ARGV[i]
  if redis.call("ZSCORE", idsKey, ref) then
    replies[#replies + 1] = {ref}
  else
    -- Run ids use no character above "~", so "(ref~" ends the range of ids starting with ref.
    replies[#replies + 1] = redis.call("ZRANGE", idsKey, "[" .. ref, "(" .. ref .. "~", "BYLEX", "LIMIT", 0, most + 1)
  end
end
return replies
