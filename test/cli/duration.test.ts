import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDurationSpec, parseDuration } from '../../src/cli/duration.js';

describe('durations typed on the command line', () => {
  it.each([
    ['7d', 604_800_000],
    ['12h', 43_200_000],
    ['30m', 1_800_000],
    ['90s', 90_000],
    ['250ms', 250],
    ['2w', 1_209_600_000],
    ['1h30m', 5_400_000],
    ['1d12h', 129_600_000],
    ['1.5h', 5_400_000],
    ['1.1s', 1100],
    ['.5s', 500],
    ['0', 0],
    ['0s', 0],
    [' 7d ', 604_800_000],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration('--max-age', text)).toBe(ms);
  });

  it.each([
    ['', ''],
    ['7', ' (a number needs a unit: ms, s, m, h, d or w)'],
    ['1.5', ' (a number needs a unit: ms, s, m, h, d or w)'],
    ['7 days', ''],
    ['1h 30m', ''],
    ['-1d', ''],
    ['7D', ''],
    ['d', ''],
    ['1.5ms', ' (a whole number of ms)'],
    ['99999999999999w', ' (too long)'],
  ])('%j is refused, quoted', (text, why) => {
    expect(() => parseDuration('--max-age', text)).toThrow(`expected --max-age to be a duration such as 7d, 12h, 30m or 1h30m${why}, got '${text}'`);
  });

  it.each([
    [604_800_000, '7d'],
    [5_400_000, '1h30m'],
    [1500, '1s500ms'],
    [0, '0'],
  ])('%i ms is shown as %s', (ms, text) => {
    expect(formatDurationSpec(ms)).toBe(text);
  });

  it('reads back what it shows', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (ms) => parseDuration('--x', formatDurationSpec(ms)) === ms));
  });
});
