/**
 * Fair share's arithmetic in Lua, run inside a real Redis with the
 * includes the scripts use: usage kept scaled to an epoch decays by its
 * half-life without ever being rewritten, a run's usage is the integral of
 * its rate, rebasing keeps every user's usage, and the claim's order keys
 * sort by priority, then need, then age.
 */
import { describe, expect, it } from 'vitest';
import { luaInclude } from '../../src/queue/lua-source.js';
import { connectClient, newQueue } from '../support/fitq.js';

const HOUR = 3_600_000;

// The usage (unscaled) of a user who held `rate` from `at` to `now`, with `scaled` before, under a half-life.
const USAGE_AT = `${luaInclude('fairshare/scaledUsage')}
local settings = {halfLife = tonumber(ARGV[1]), epoch = tonumber(ARGV[2])}
local entry = {scaled = tonumber(ARGV[3]), at = tonumber(ARGV[4]), rate = tonumber(ARGV[5])}
local now = tonumber(ARGV[6])
return tostring(scaledUsage(settings, entry, now) * 2 ^ (-(now - settings.epoch) / settings.halfLife))`;

// Writes users' entries, rebases to ARGV[3], and returns each user's usage at ARGV[4] before and after.
const REBASE = `${luaInclude('fairshare/rebaseUsage', 'fairshare/fairOrder')}
local base = ARGV[1]
redis.call("HSET", KEYS[1], "epoch", ARGV[2], "halfLife", tostring(${HOUR}))
redis.call("HSET", KEYS[2], "alice", "100,0,2", "bob", "3,500000,0")
local later = tonumber(ARGV[4])
local before = fairOrder(base, later)
rebaseUsage(base, fairSettings(base), tonumber(ARGV[3]))
local after = fairOrder(base, later)
return {tostring(before.usage.alice), tostring(after.usage.alice), tostring(before.usage.bob), tostring(after.usage.bob),
  redis.call("HGET", KEYS[1], "epoch")}`;

// The order keys of (score, user) pairs under users' needs, sorted.
const KEYS_SORTED = `${luaInclude('fairshare/fairKey')}
local order = {on = true, need = {alice = 5, bob = 1}, sorted = {0, 1, 5}, ranks = {}}
local pairs = {}
for i = 1, #ARGV, 2 do pairs[#pairs + 1] = {fairKey(order, tonumber(ARGV[i]), ARGV[i + 1] ~= "" and ARGV[i + 1] or nil), ARGV[i], ARGV[i + 1]} end
table.sort(pairs, function(a, b) return a[1] < b[1] end)
local out = {}
for _, pair in ipairs(pairs) do out[#out + 1] = pair[2] .. "/" .. pair[3] end
return out`;

describe('fair share in Lua', () => {
  it('counts a run as the integral of its rate, and halves usage every half-life, from the scaled value alone', async () => {
    const { redis } = await connectClient(newQueue());
    const usageAt = async (...args: number[]) => Number(await redis.eval(USAGE_AT, 0, ...args.map(String)));
    // Rate 2 for 10 s, a week's half-life: 20, less its decay since (2^(-10 s / 7 d) of the first second's, ...).
    const week = 7 * 24 * HOUR;
    expect(await usageAt(week, 0, 0, 0, 2, 10_000)).toBeCloseTo(2 * (week / 1000 / Math.LN2) * (1 - 2 ** (-10_000 / week)), 9);
    expect(await usageAt(week, 0, 0, 0, 2, 10_000)).toBeCloseTo(20, 3);
    // Rate 1 for one half-life h: h/ln2 * (1 - 1/2) resource-seconds as of its end.
    expect(await usageAt(HOUR, 0, 0, 0, 1, HOUR)).toBeCloseTo(3600 / Math.LN2 / 2, 6);
    // 100 used at the epoch, nothing running: 50 one half-life later, 25 two later.
    expect(await usageAt(HOUR, 0, 100, 0, 0, HOUR)).toBeCloseTo(50, 9);
    expect(await usageAt(HOUR, 0, 100, 0, 0, 2 * HOUR)).toBeCloseTo(25, 9);
    // Far from the epoch (the scale at 2^200), the same: decay depends on the time since, not on the epoch.
    const far = 200 * HOUR;
    expect(await usageAt(HOUR, 0, 100 * 2 ** 200, far, 0, far + HOUR)).toBeCloseTo(50, 6);
  });

  it('rebases every user to a new epoch without changing their usage', async () => {
    const { redis, keys } = await connectClient(newQueue());
    const [aliceBefore, aliceAfter, bobBefore, bobAfter, epoch] = (await redis.eval(REBASE, 2, keys.fairShare, keys.fairUsage, keys.base, '0', String(3 * HOUR), String(4 * HOUR))) as string[];
    expect(Number(aliceBefore)).toBeGreaterThan(0);
    expect(Number(aliceAfter)).toBeCloseTo(Number(aliceBefore), 6);
    expect(Number(bobAfter)).toBeCloseTo(Number(bobBefore), 9);
    expect(epoch).toBe(String(3 * HOUR));
  });

  it('orders by priority first, then by need (users without usage first), then by age', async () => {
    const { redis } = await connectClient(newQueue());
    const band = 2 ** 32;
    const score = (priorityBand: number, seq: number) => String(priorityBand * band + seq);
    const sorted = await redis.eval(KEYS_SORTED, 0,
      score(1000001, 1), 'alice', score(1000001, 2), 'bob', score(1000001, 3), 'carol',
      score(1000000, 9), 'alice', score(1000001, 4), 'bob', score(1000001, 5), '');
    expect(sorted).toEqual([
      `${score(1000000, 9)}/alice`,
      `${score(1000001, 3)}/carol`, `${score(1000001, 5)}/`,
      `${score(1000001, 2)}/bob`, `${score(1000001, 4)}/bob`,
      `${score(1000001, 1)}/alice`,
    ]);
  });
});
