/**
 * The Lua side of exact arithmetic, run inside a real Redis with the same
 * include the scripts use.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { luaInclude } from '../../src/queue/lua-source.js';
import { formatMicros, parseDecimal } from '../../src/resources/amount.js';
import { connectClient, newQueue } from '../support/fitq.js';

const AMOUNTS = luaInclude('amounts/parseAmount', 'amounts/formatAmount', 'amounts/compareAmounts', 'amounts/addAmounts', 'amounts/subtractAmounts');

// Reserves and releases `demand` from `capacity` `cycles` times, checking it
// never exceeds the capacity, and returns the final amount.
const CYCLES = `${AMOUNTS}
local capacity = parseAmount(ARGV[1])
local demand = parseAmount(ARGV[2])
local free = capacity
for i = 1, tonumber(ARGV[3]) do
  free = subtractAmounts(free, demand)
  if free[1] < 0 then return "negative" end
  free = addAmounts(free, demand)
  if compareAmounts(free, capacity) > 0 then return "over capacity" end
end
return formatAmount(free)`;

// Takes `demand` out as many times as it fits, then puts it all back.
const DRAIN = `${AMOUNTS}
local capacity, demand = parseAmount(ARGV[1]), parseAmount(ARGV[2])
local free, taken = capacity, 0
while compareAmounts(demand, free) <= 0 do free = subtractAmounts(free, demand); taken = taken + 1 end
local left = formatAmount(free)
for i = 1, taken do free = addAmounts(free, demand) end
return {taken, left, formatAmount(free)}`;

describe('exact amounts in Lua', () => {
  it('a million reserve/release cycles of 0.1 leave capacity exactly as it was', async () => {
    const client = await connectClient(newQueue());
    expect(await client.redis.eval(CYCLES, 0, '7', '0.1', 1_000_000)).toBe('7');
  });

  it('reserve/release cycles of any amounts restore any capacity exactly', async () => {
    const client = await connectClient(newQueue());
    const amount = fc.bigInt({ min: 1n, max: 10n ** 18n }).map(formatMicros);
    await fc.assert(
      fc.asyncProperty(amount, amount, async (a, b) => {
        const [capacity, demand] = parseDecimal(a) >= parseDecimal(b) ? [a, b] : [b, a];
        expect(await client.redis.eval(CYCLES, 0, capacity, demand, 1000)).toBe(capacity);
      }),
      { numRuns: 50 },
    );
  });

  it('formats and parses negative amounts exactly', async () => {
    const client = await connectClient(newQueue());
    const script = `${AMOUNTS}
      local diff = subtractAmounts(parseAmount(ARGV[1]), parseAmount(ARGV[2]))
      return {formatAmount(diff), formatAmount(parseAmount(formatAmount(diff)))}`;
    expect(await client.redis.eval(script, 0, '0.3', '0.8')).toEqual(['-0.5', '-0.5']);
    expect(await client.redis.eval(script, 0, '1', '3')).toEqual(['-2', '-2']);
    expect(await client.redis.eval(script, 0, '2.25', '0.5')).toEqual(['1.75', '1.75']);
  });

  it('ten reservations of 0.1 fit in 1 exactly, an eleventh does not', async () => {
    const client = await connectClient(newQueue());
    expect(await client.redis.eval(DRAIN, 0, '1', '0.1')).toEqual([10, '0', '1']);
  });
});
