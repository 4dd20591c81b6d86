/**
 * Durations as users type them on the command line: `7d`, `12h`, `1h30m`,
 * `90s`, `1.5h`, `250ms`; and back, exactly (`604800000` ms is `7d`). Also
 * time limits (Slurm's `HH:MM:SS`, `D-HH:MM:SS`, plain seconds) and the
 * signal a run gets ahead of its limit (`SIGUSR1@120s`): the one place for
 * the syntax of times typed on the command line.
 */
import { UsageError } from '../errors.js';
import { constants } from 'node:os';
import { quote } from '../text/quote.js';

const osSignals = constants.signals;

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

/** Longest time limit: 365 days (Slurm's own longest is unlimited; a year is longer than any real run). */
export const MAX_TIME_LIMIT_MS = 365 * 86_400_000;

/** Slurm's clock forms: `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`. */
const CLOCK = /^(?:(\d+)-(\d+)(?::(\d+)(?::(\d+))?)?|(\d+):(\d+)(?::(\d+))?)$/;

/**
 * A time limit in ms, as Slurm and users type it: a duration (`2h30m`,
 * `90s`, see parseDuration), a clock (`HH:MM:SS`, `MM:SS`, `D-HH:MM:SS`,
 * `D-HH`, `D-HH:MM`) or plain seconds (`5400`, told to `warn` as Slurm's
 * `-t 5400` would be minutes). More than 0, at most 365 days; anything else
 * is a UsageError quoting it. Every flag that takes a limit goes through here.
 */
export function parseTimeLimit(flag: string, text: string, warn?: (warning: string) => void): number {
  const refuse = (why: string) =>
    new UsageError(`expected ${flag} to be a time limit such as 2h30m, 90s, 02:30:00, 1-12:00:00 or 5400 (seconds)${why}, got ${quote(text)}`);
  const trimmed = text.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) {
    ms = Number(trimmed) * 1000;
  } else {
    const clock = CLOCK.exec(trimmed);
    if (clock) {
      const [, days, dayHours, dayMinutes, daySeconds, first, second, third] = clock;
      const n = (value: string | undefined) => Number(value ?? 0);
      let h: number, m: number, s: number;
      if (days !== undefined) [h, m, s] = [n(dayHours), n(dayMinutes), n(daySeconds)];
      else if (third !== undefined) [h, m, s] = [n(first), n(second), n(third)];
      else [h, m, s] = [0, n(first), n(second)];
      // The fields after the first must be of a clock: minutes and seconds under 60, hours under 24 after days.
      const lead = days !== undefined ? 'd' : third !== undefined ? 'h' : 'm';
      if ((lead !== 'm' && m >= 60) || s >= 60 || (lead === 'd' && h >= 24)) throw refuse(' (a field past its clock range)');
      ms = (((n(days) * 24 + h) * 60 + m) * 60 + s) * 1000;
    } else {
      try {
        ms = parseDuration(flag, trimmed);
      } catch {
        throw refuse('');
      }
    }
  }
  if (!Number.isSafeInteger(ms) || ms > MAX_TIME_LIMIT_MS) throw refuse(' (at most 365 days)');
  if (ms <= 0) throw refuse(' (more than 0)');
  if (warn && /^\d+$/.test(trimmed)) warn(bareSecondsWarning(flag, trimmed, ms));
  return ms;
}

/**
 * Said on stderr whenever a limit is a bare number: fitq reads it as
 * seconds (as `--time-signal @120`, `--lease` and Slurm's own `--signal`
 * do), where Slurm's `-t 30` is minutes; a unit or a clock says which.
 */
function bareSecondsWarning(flag: string, text: string, ms: number): string {
  const shown = ms >= 60_000 ? ` (${formatTimeLimit(ms)})` : '';
  return `${flag} ${text} is read as ${text} seconds${shown}; write ${text}m for ${text} minutes (Slurm's -t ${text}), or ${text}s to say seconds`;
}

/** A time limit (ms) as users type it: `2h30m`, `90s`. */
export const formatTimeLimit = (ms: number): string => formatDurationSpec(ms);

/** Which signal a run gets ahead of its time limit, and how long before it. */
export interface TimeSignal {
  /** `SIGTERM`, `SIGUSR1`... */
  signal: string;
  /** How long before the limit, in ms (0: at the limit). */
  beforeMs: number;
}

/** The signals a run may be sent ahead of its limit (SIGKILL and SIGSTOP cannot be trapped: the run could do nothing with them). */
export const TIME_SIGNALS: readonly string[] = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGALRM', 'SIGXCPU', 'SIGCONT', 'SIGWINCH', 'SIGURG'];

/**
 * `--time-signal SIG[@BEFORE]`: a signal by name (`SIGUSR1`, `USR1`, any
 * case) or number, and optionally how long before the limit (a time limit's
 * syntax, or 0; default 0: at the limit). Refused quoting the value.
 */
export function parseTimeSignal(flag: string, text: string, beforeWhat = 'the limit'): TimeSignal {
  const refuse = (why: string) =>
    new UsageError(`expected ${flag} to be SIGNAL[@TIME] such as SIGUSR1@120s or TERM${why}, got ${quote(text)}`);
  const [name = '', before, ...rest] = text.trim().split('@');
  if (rest.length > 0) throw refuse('');
  const signal = signalName(name);
  if (signal === undefined) throw refuse(` (a signal: ${TIME_SIGNALS.map((s) => s.slice(3)).join(', ')})`);
  if (before === undefined || before.trim() === '0') return { signal, beforeMs: 0 };
  try {
    return { signal, beforeMs: parseTimeLimit(flag, before) };
  } catch {
    throw refuse(` (the time before ${beforeWhat}: 120s, 2m, 00:02:00 or 120)`);
  }
}

function signalName(text: string): string | undefined {
  const upper = text.trim().toUpperCase();
  if (/^\d+$/.test(upper)) {
    const found = TIME_SIGNALS.find((name) => osSignals[name as keyof typeof osSignals] === Number(upper));
    return found;
  }
  const name = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  return TIME_SIGNALS.includes(name) ? name : undefined;
}

/** `SIGUSR1@2m` as parseTimeSignal reads it back; `SIGTERM` alone at the limit. */
export function formatTimeSignal(timeSignal: TimeSignal): string {
  return timeSignal.beforeMs === 0 ? timeSignal.signal : `${timeSignal.signal}@${formatDurationSpec(timeSignal.beforeMs)}`;
}
