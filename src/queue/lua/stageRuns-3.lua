#!lua
--[[
  Stages a batch of runs, all or nothing: each becomes a job of the
  namespace's BullMQ queue (job id = run id, state prioritized) and enters
  the staged index of its demand shape.

  KEYS[1] seq      counter of staged runs (staging order)
  KEYS[2] ids      zset of every run id, score 0 (looked up by prefix)
  KEYS[3] groups   hash: group of shapes with staged runs -> version

  ARGV[1] base     key prefix, e.g. "fitq:{default}:"
  ARGV[2] count    number of runs; then, for each run, 4 arguments:
          id, shape ("a=1,b=2", "none", pinned: "gpu=1;gpus=0"), priority (integer),
          data (the job data: JSON text of what the run is)

  Runs are staged now by the Redis server's clock (their job's timestamp).

  Returns {CODE.ok, seq of the first run, timestamp}, {CODE.runIdTaken, id}, or
  {CODE.olderLayout} when the namespace holds runs stored by an older fitq.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): no run of the batch is staged.
]]
-- @include serverNow
-- @include jobKey
-- @include bullPriority
-- @include orderScore
-- @include emitEvent
-- @include stage
-- @include publish
-- @include olderLayout
local seqKey = KEYS[1]
local idsKey = KEYS[2]
-- (stage adds each run's shape to its group, see indexShape.)
local groupsKey = KEYS[3]
local base, count = ARGV[1], tonumber(ARGV[2])

if olderLayout(base) then return {CODE.olderLayout} end
for i = 0, count - 1 do
  local id = ARGV[3 + i * 4]
  if redis.call("EXISTS", jobKey(base, id)) == 1 then return {CODE.runIdTaken, id} end
end

local now = serverNow()
local firstSeq
for i = 0, count - 1 do
  local id, shape, priority, data = ARGV[3 + i * 4], ARGV[4 + i * 4], ARGV[5 + i * 4], ARGV[6 + i * 4]
  local seq = redis.call("INCR", seqKey)
  firstSeq = firstSeq or seq
  local score = orderScore(priority, seq)
  local bull = bullPriority(priority)
  redis.call("HSET", jobKey(base, id), "name", "run", "data", data,
    "opts", cjson.encode({priority = bull, attempts = 1}), "timestamp", now, "delay", 0, "priority", bull,
    "status", "staged", "seq", seq, "score", score, "shape", shape)
  emitEvent(base, "event", "added", "jobId", id, "name", "run")
  stage(base, id, shape, score)
  redis.call("ZADD", idsKey, 0, id)
end
publish(base, {type = "staged", count = count})
return {CODE.ok, firstSeq, now}
