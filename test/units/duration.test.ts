import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDurationSpec, formatTimeLimit, formatTimeSignal, parseDuration, parseTimeLimit, parseTimeSignal } from '../../src/units/duration.js';

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

describe('time limits as Slurm users type them', () => {
  it('tells `warn` that a bare number is seconds (Slurm would read minutes), and nothing for a unit or a clock', () => {
    const warnings: string[] = [];
    expect(parseTimeLimit('--time-limit', ' 5400 ', (warning) => warnings.push(warning))).toBe(5_400_000);
    for (const text of ['90m', '01:30:00', '0-01:30', '90:00']) expect(parseTimeLimit('--time-limit', text, (warning) => warnings.push(warning))).toBe(5_400_000);
    expect(warnings).toEqual(["--time-limit 5400 is read as 5400 seconds (1h30m); write 5400m for 5400 minutes (Slurm's -t 5400), or 5400s to say seconds"]);
  });

  it.each([
    ['2h30m', 9_000_000],
    ['90s', 90_000],
    ['1.5h', 5_400_000],
    ['5400', 5_400_000],
    ['1', 1000],
    ['02:30:00', 9_000_000],
    ['2:30:00', 9_000_000],
    ['30:00', 1_800_000],
    ['90:00', 5_400_000],
    ['100:00:00', 360_000_000],
    ['1-12:00:00', 129_600_000],
    ['1-12', 129_600_000],
    ['1-12:30', 131_400_000],
    ['0-00:00:01', 1000],
    [' 2h ', 7_200_000],
    ['1.5s', 1500],
    ['450ms', 450],
  ])('%s is %i ms', (text, ms) => {
    expect(parseTimeLimit('--time-limit', text)).toBe(ms);
  });

  it.each([
    ['', ''],
    ['0', ' (more than 0)'],
    ['0s', ' (more than 0)'],
    ['00:00:00', ' (more than 0)'],
    ['1.5ms', ''],
    ['-1', ''],
    ['2 hours', ''],
    ['1:2:3:4', ''],
    ['01:60:00', ' (a field past its clock range)'],
    ['00:00:60', ' (a field past its clock range)'],
    ['1-24:00:00', ' (a field past its clock range)'],
    ['1:', ''],
    ['366d', ' (at most 365 days)'],
    ['99999999999999999999', ' (at most 365 days)'],
  ])('%j is refused, quoted', (text, why) => {
    expect(() => parseTimeLimit('--time-limit', text)).toThrow(
      `expected --time-limit to be a time limit such as 2h30m, 90s, 02:30:00, 1-12:00:00 or 5400 (seconds)${why}, got '${text}'`,
    );
  });

  it('reads back what it shows', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 365 * 86_400_000 }), (ms) => parseTimeLimit('--x', formatTimeLimit(ms)) === ms));
  });
});

describe('the signal ahead of a time limit', () => {
  it.each([
    ['SIGUSR1@120s', 'SIGUSR1', 120_000],
    ['usr1@2m', 'SIGUSR1', 120_000],
    ['TERM', 'SIGTERM', 0],
    ['SIGINT@0', 'SIGINT', 0],
    ['10@00:01:00', 'SIGUSR1', 60_000],
    ['USR2@90', 'SIGUSR2', 90_000],
  ])('%s is %s %i ms before', (text, signal, beforeMs) => {
    expect(parseTimeSignal('--time-signal', text)).toEqual({ signal, beforeMs });
  });

  it.each([
    ['SIGKILL', ' (a signal: TERM, INT, HUP, QUIT, USR1, USR2, ALRM, XCPU, CONT, WINCH, URG)'],
    ['FOO@1s', ' (a signal: TERM, INT, HUP, QUIT, USR1, USR2, ALRM, XCPU, CONT, WINCH, URG)'],
    ['', ' (a signal: TERM, INT, HUP, QUIT, USR1, USR2, ALRM, XCPU, CONT, WINCH, URG)'],
    ['USR1@soon', ' (the time before the limit: 120s, 2m, 00:02:00 or 120)'],
    ['USR1@1@2', ''],
  ])('%j is refused, quoted', (text, why) => {
    expect(() => parseTimeSignal('--time-signal', text)).toThrow(`expected --time-signal to be SIGNAL[@TIME] such as SIGUSR1@120s or TERM${why}, got '${text}'`);
  });

  it('shows a signal as it is typed', () => {
    expect(formatTimeSignal({ signal: 'SIGUSR1', beforeMs: 120_000 })).toBe('SIGUSR1@2m');
    expect(formatTimeSignal({ signal: 'SIGTERM', beforeMs: 0 })).toBe('SIGTERM');
  });
});
