-- @include amounts/readAmounts
-- @include devices/readDevices
-- @include candidates/readOlderHold
-- @include fairshare/fairOrder

-- A worker as a claim sees it. `keys`: its hashes (capacity, free, devices,
-- and reserved: the records of its claims; gpus: its GPU probe's readings,
-- with gpuStaleMs, how old they may be, nil when it does not probe; mig: its
-- MIG devices, as registered) and the
-- namespace's workers zset and holds hash. `drops` gathers
-- what a claim would drop from the indexes it reads (see noteDrop). `limits`:
-- the worker's default and maximum time limits (`default`, `max`, seconds;
-- nil for none). `quotas`: users' quotas as read (quotaOf), shared by
-- every worker's view of one call; `fair`: the order fair share puts users
-- in (fairshare/fairOrder), read once per call and kept with the pool too.
local function readClaimView(base, name, keys, clock, spread, pool, limits)
  local drops = {}
  pool.fair = pool.fair or fairOrder(base, clock)
  return {
    base = base,
    name = name,
    limits = limits or {},
    reservedKey = keys.reserved,
    clock = clock,
    capacity = readAmounts(keys.capacity),
    free = readAmounts(keys.free),
    pool = pool,
    devices = readDevices(keys.devices, spread,
      keys.gpus and {key = keys.gpus, staleMs = keys.gpuStaleMs, clock = clock, reserved = keys.reserved}, keys.mig),
    olderHold = readOlderHold(base, keys.holds, keys.workers, name, clock, pool, drops),
    fair = pool.fair,
    drops = drops,
    quotas = pool.quotas,
  }
end
