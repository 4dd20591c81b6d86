/**
 * Durations as users type them on the command line: `7d`, `12h`, `1h30m`,
 * `90s`, `1.5h`, `250ms`; and back, exactly (`604800000` ms is `7d`).
 */
import { UsageError } from '../errors.js';
import { quote } from '../queue/names.js';

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const PART = /(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d|w)/y;

/**
 * A duration in ms: one or more parts of a number and a unit (ms, s, m, h,
 * d, w), e.g. `7d`, `1h30m`, `1.5h`; `0` alone is zero. Anything else, or
 * a value that is not a whole number of ms, is a UsageError quoting it.
 */
export function parseDuration(flag: string, text: string): number {
  const refuse = (why: string) =>
    new UsageError(`expected ${flag} to be a duration such as 7d, 12h, 30m or 1h30m${why}, got ${quote(text)}`);
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  if (trimmed === '') throw refuse('');
  if (/^\d+(\.\d+)?$/.test(trimmed)) throw refuse(' (a number needs a unit: ms, s, m, h, d or w)');
  // Exact decimal arithmetic: 1.1s is 1100 ms, not 1100.0000000000002.
  let ms = 0n;
  PART.lastIndex = 0;
  while (PART.lastIndex < trimmed.length) {
    const match = PART.exec(trimmed);
    if (!match) throw refuse('');
    const [whole = '', fraction = ''] = match[1]!.split('.');
    const scaled = BigInt(whole + fraction) * BigInt(UNIT_MS[match[2]!]!);
    const divisor = 10n ** BigInt(fraction.length);
    if (scaled % divisor !== 0n) throw refuse(' (a whole number of ms)');
    ms += scaled / divisor;
  }
  if (ms > BigInt(Number.MAX_SAFE_INTEGER)) throw refuse(' (too long)');
  return Number(ms);
}

/** A duration in ms as parseDuration reads it back, largest units first: `7d`, `1h30m`, `1s500ms`, `0`. */
export function formatDurationSpec(ms: number): string {
  if (ms === 0) return '0';
  const parts: string[] = [];
  let left = ms;
  for (const unit of ['d', 'h', 'm', 's', 'ms']) {
    const size = UNIT_MS[unit]!;
    const count = Math.floor(left / size);
    if (count > 0) parts.push(`${count}${unit}`);
    left -= count * size;
  }
  return parts.join('');
}
