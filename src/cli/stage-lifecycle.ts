/**
 * `fitq stage` flags for when a run may start and what happens when it
 * fails: --hold, --begin/--delay, the --after… dependencies (run ids, array
 * ids for every run of an array, `@` and `@~N` for the runs staged from
 * this shell) and --retry-on-failure.
 */
import { Flags } from '@oclif/core';
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';
import { MAX_RETRY_ON_FAILURE, type Dependency, type LifecycleOptions, type RetryPolicy } from '../model/parked.js';
import { parseIntegerOption } from '../model/run-checks.js';
import { splitIds } from '../model/dependencies.js';
import { parseDuration } from '../units/duration.js';
import { isShorthand, shorthandRuns } from './last-staged.js';

const after = (summary: string) => Flags.string({ multiple: true, summary });

export const lifecycleFlags = {
  hold: Flags.boolean({ summary: 'Stage the run held: it starts only after fitq release ID.' }),
  begin: Flags.string({
    summary: 'Start no earlier than this time: ISO 8601 (2026-05-01T08:00), HH:MM[:SS] (today, or tomorrow if past), or now+DURATION (now+10m).',
  }),
  delay: Flags.string({ summary: 'Start no earlier than this long after staging (10m, 1h30m).' }),
  after: after(
    'Start once these runs completed successfully: run ids, array ids (every run of the array) or prefixes, @ (every run the last fitq stage staged from this shell: one, a batch or an array) or @~N (the Nth staging before), comma separated (repeatable). Same as --after-ok.',
  ),
  'after-ok': after('Start once every one of these runs completed successfully (Slurm afterok; an array: all its runs).'),
  'after-any': after('Start once any one of these runs completed successfully.'),
  'after-notok': after(
    'Start once every one of these runs ended without success: failed, timeout, lost, canceled or rejected (Slurm afternotok; an array: all its runs ended, one at least without success).',
  ),
  'after-end': after('Start once every one of these runs ended, in any way (Slurm afterany; an array: all its runs).'),
  'keep-if-dependency-fails': Flags.boolean({
    summary: 'If a dependency ends so that this run can never start, keep it staged (saying so) instead of canceling it.',
  }),
  'retry-on-failure': Flags.string({
    summary: `Stage the run again, at its place in the order, up to this many times (at most ${MAX_RETRY_ON_FAILURE}) when it fails on its own (non-zero exit or a signal).`,
  }),
  'retry-on-exit-codes': Flags.string({ summary: 'With --retry-on-failure: only for these exit codes, comma separated (3,137).' }),
  backoff: Flags.string({ summary: 'With --retry-on-failure: wait this long before it may start again (30s); 30s,exp doubles it each time.' }),
  'retry-on-timeout': Flags.boolean({ summary: 'With --retry-on-failure: a run that ends timeout (past its time limit) counts as a failure.' }),
};

/** The values of lifecycleFlags as oclif parses them. */
interface LifecycleFlagValues {
  hold?: boolean;
  begin?: string;
  delay?: string;
  after?: string[];
  'after-ok'?: string[];
  'after-any'?: string[];
  'after-notok'?: string[];
  'after-end'?: string[];
  'keep-if-dependency-fails'?: boolean;
  'retry-on-failure'?: string;
  'retry-on-exit-codes'?: string;
  backoff?: string;
  'retry-on-timeout'?: boolean;
}

/**
 * The lifecycle options the flags give; `namespace` (the key prefix) for
 * `@`. `now` (the local clock) is only for --begin times of day and dates:
 * `now+…` and --delay are measured by the Redis server's clock.
 */
export function parseLifecycleFlags(flags: LifecycleFlagValues, namespace: string, now = new Date()): LifecycleOptions {
  const options: LifecycleOptions = {};
  if (flags.hold) options.hold = true;
  if (flags.begin !== undefined && flags.delay !== undefined) {
    throw new UsageError(`give --begin ${quote(flags.begin)} or --delay ${quote(flags.delay)}, not both`);
  }
  if (flags.begin !== undefined) Object.assign(options, parseBegin(flags.begin, now));
  if (flags.delay !== undefined) options.delayMs = parseDuration('--delay', flags.delay);
  const groups: Dependency[] = [];
  const add = (flag: string, kind: Dependency['kind'], values: string[] | undefined) => {
    if (values === undefined) return;
    const refs = values.flatMap((value) => splitIds(flag, value));
    const named = refs.map((ref) => (isShorthand(ref) ? shorthandRuns(ref, namespace) : { ids: [ref], arrays: [] }));
    const arrays = named.flatMap((name) => name.arrays);
    groups.push({ kind, ids: named.flatMap((name) => name.ids), ...(arrays.length > 0 ? { arrays } : {}) });
  };
  add('--after', 'ok', flags.after);
  add('--after-ok', 'ok', flags['after-ok']);
  add('--after-any', 'any', flags['after-any']);
  add('--after-notok', 'notok', flags['after-notok']);
  add('--after-end', 'end', flags['after-end']);
  if (groups.length > 0) options.after = groups;
  if (flags['keep-if-dependency-fails']) {
    if (groups.length === 0) throw new UsageError('--keep-if-dependency-fails needs a dependency (--after…)');
    options.keepIfDependencyFails = true;
  }
  const retry = parseRetry(flags);
  if (retry) options.retry = retry;
  return options;
}

function parseRetry(flags: LifecycleFlagValues): RetryPolicy | undefined {
  const text = flags['retry-on-failure'];
  if (text === undefined) {
    for (const flag of ['retry-on-exit-codes', 'backoff', 'retry-on-timeout'] as const) {
      if (flags[flag] !== undefined && flags[flag] !== false) throw new UsageError(`--${flag} goes with --retry-on-failure N`);
    }
    return undefined;
  }
  const retry: RetryPolicy = { max: parseIntegerOption('--retry-on-failure', text, 0, MAX_RETRY_ON_FAILURE) };
  const codes = flags['retry-on-exit-codes'];
  if (codes !== undefined) retry.exitCodes = codes.split(',').map((code) => parseIntegerOption('--retry-on-exit-codes', code, 0, 255));
  const backoff = flags.backoff;
  if (backoff !== undefined) {
    const [duration = '', mode, ...rest] = backoff.split(',');
    if (rest.length > 0 || (mode !== undefined && mode !== 'exp')) {
      throw new UsageError(`expected --backoff to be a duration, optionally followed by ,exp (30s,exp), got ${quote(backoff)}`);
    }
    retry.backoffMs = parseDuration('--backoff', duration);
    if (mode === 'exp') retry.exponential = true;
  }
  if (flags['retry-on-timeout']) retry.onTimeout = true;
  return retry;
}

/** --begin: an absolute time (beginAt), or now+DURATION (delayMs, by the server's clock). */
function parseBegin(text: string, now: Date): { beginAt?: number; delayMs?: number } {
  const trimmed = text.trim();
  const relative = /^now(?:\s*\+\s*(.+))?$/i.exec(trimmed);
  if (relative) return { delayMs: relative[1] === undefined ? 0 : parseDuration('--begin now+', relative[1]) };
  const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(trimmed);
  if (clock) {
    const [hours, minutes, seconds] = [Number(clock[1]), Number(clock[2]), Number(clock[3] ?? 0)];
    if (hours > 23 || minutes > 59 || seconds > 59) throw beginError(text);
    const at = new Date(now);
    at.setHours(hours, minutes, seconds, 0);
    // A time of day already past today is tomorrow's.
    if (at.getTime() <= now.getTime()) at.setDate(at.getDate() + 1);
    return { beginAt: at.getTime() };
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(trimmed)) throw beginError(text);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) throw beginError(text);
  return { beginAt: at };
}

function beginError(text: string): UsageError {
  return new UsageError(`expected --begin to be an ISO 8601 time (2026-05-01T08:00), HH:MM[:SS] or now+DURATION (now+10m), got ${quote(text)}`);
}
