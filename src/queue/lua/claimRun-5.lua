--[[
  Claims for a worker the first staged run, in order (higher priority, then
  older), whose demands fit the worker's free capacity, and reserves them.
  A run that does not fit never blocks a later one that does. Cost grows with
  the number of demand shapes, not with the number of staged runs.

  KEYS[1] worker            hash: token, running, ...
  KEYS[2] worker:capacity   hash: resource -> total amount
  KEYS[3] worker:free       hash: resource -> free amount
  KEYS[4] worker:runs       set of the worker's running run ids
  KEYS[5] workers           zset: worker name -> lease deadline

  ARGV[1] base      key prefix
  ARGV[2] token     the worker's registration token (fencing)
  ARGV[3] now       epoch ms
  ARGV[4] maxRuns   most runs at once (0 = no limit)

  Returns one of:
    {1, runId, epoch, runFields}  claimed; runFields is the run hash, flat
    {2, ignored}   nothing fits the free capacity now, something fits the total
    {3, ignored}   no staged run fits the worker's total capacity
    {4}            the worker already runs maxRuns runs
    {-1}           the worker is not registered under this token, or its
                   lease has run out (fenced)
  ignored lists "shape|missing,names|version" for shapes needing resources
  the worker does not declare; version (staged count and newest id) changes
  when runs of the shape come or go.
]]
-- @include amounts
-- @include runs
-- @include clock
local base, token, now, maxRuns = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

if redis.call("HGET", KEYS[1], "token") ~= token then return {-1} end
-- A worker whose lease ran out is as good as reaped: it may claim nothing.
local deadline = redis.call("ZSCORE", KEYS[5], redis.call("HGET", KEYS[1], "name"))
if not deadline or tonumber(deadline) < serverNow() then return {-1} end
local running = tonumber(redis.call("HGET", KEYS[1], "running") or "0")
if maxRuns > 0 and running >= maxRuns then return {4} end

local capacity = readAmounts(KEYS[2])
local free = readAmounts(KEYS[3])

local function fitsWithin(demand, available)
  for _, item in ipairs(demand) do
    if compareAmounts(item[2], available[item[1]]) > 0 then return false end
  end
  return true
end

local best, bestScore, bestShape, bestDemand
local fitsTotal = false
local ignored = {}
for _, shape in ipairs(redis.call("SMEMBERS", base .. "shapes")) do
  local demand = parseResourceList(shape)
  local missing = {}
  for _, item in ipairs(demand) do
    if capacity[item[1]] == nil then missing[#missing + 1] = item[1] end
  end
  if #missing > 0 then
    local stagedKey = base .. "staged:" .. shape
    local newest = redis.call("ZRANGE", stagedKey, -1, -1)[1] or ""
    ignored[#ignored + 1] = shape .. "|" .. table.concat(missing, ",") .. "|" ..
      redis.call("ZCARD", stagedKey) .. ":" .. newest
  elseif fitsWithin(demand, capacity) then
    fitsTotal = true
    if fitsWithin(demand, free) then
      local head = redis.call("ZRANGE", base .. "staged:" .. shape, 0, 0, "WITHSCORES")
      if head[1] == nil then
        redis.call("SREM", base .. "shapes", shape)
      elseif bestScore == nil or tonumber(head[2]) < bestScore then
        best, bestScore, bestShape, bestDemand = head[1], tonumber(head[2]), shape, demand
      end
    end
  end
end

if best == nil then return {fitsTotal and 2 or 3, ignored} end

local runKey = base .. "run:" .. best
unstage(base, best, bestShape)
adjustAmounts(KEYS[3], bestDemand, -1)
local epoch = redis.call("HINCRBY", runKey, "epoch", 1)
local workerName = redis.call("HGET", KEYS[1], "name")
redis.call("HSET", runKey, "status", "running", "worker", workerName, "startedAt", now)
redis.call("HDEL", runKey, "reason")
redis.call("SADD", KEYS[4], best)
redis.call("HINCRBY", KEYS[1], "running", 1)
return {1, best, epoch, redis.call("HGETALL", runKey)}
