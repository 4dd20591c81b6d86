--[[
  Stages a batch of runs, all or nothing.

  KEYS[1] seq      counter of staged runs (staging order)
  KEYS[2] runs     zset of every run id, scored by seq
  KEYS[3] shapes   set of demand shapes that have staged runs
  (and base .. "ids", the lexicographic index of run ids, score 0)

  ARGV[1] base     key prefix, e.g. "fitq:{default}:"
  ARGV[2] now      epoch ms
  ARGV[3] count    number of runs; then, for each run, 4 arguments:
          id, shape ("a=1,b=2", "none", pinned: "gpu=1;gpus=0"), priority (integer),
          fields (JSON object of string fields for the run hash)

  Returns {1, seq of the first run} or {-2, id} when a run id is taken.
]]
-- @include amounts
-- @include runs
local base, now, count = ARGV[1], ARGV[2], tonumber(ARGV[3])

for i = 0, count - 1 do
  local id = ARGV[4 + i * 4]
  if redis.call("EXISTS", base .. "run:" .. id) == 1 then return {-2, id} end
end

local firstSeq
for i = 0, count - 1 do
  local id, shape = ARGV[4 + i * 4], ARGV[5 + i * 4]
  local priority = tonumber(ARGV[6 + i * 4])
  local fields = cjson.decode(ARGV[7 + i * 4])
  local seq = redis.call("INCR", KEYS[1])
  firstSeq = firstSeq or seq
  -- Higher priority first, then staging order; exact while |priority| <= 2^20.
  local score = string.format("%.0f", -priority * 4294967296 + seq)
  local args = {"id", id, "status", "staged", "seq", seq, "score", score,
    "priority", ARGV[6 + i * 4], "stagedAt", now, "shape", shape}
  for name, value in pairs(fields) do
    args[#args + 1] = name
    args[#args + 1] = value
  end
  redis.call("HSET", base .. "run:" .. id, unpack(args))
  redis.call("ZADD", base .. "staged:" .. shape, score, id)
  redis.call("SADD", KEYS[3], shape)
  redis.call("ZADD", KEYS[2], seq, id)
  redis.call("ZADD", base .. "ids", 0, id)
end
publish(base, {type = "staged", count = count})
return {1, firstSeq}
