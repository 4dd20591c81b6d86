/**
 * Runs that are staged but may not start yet ("parked"): held (`fitq hold`,
 * `stage --hold`), not begun (`--begin`, `--delay`, a retry's backoff), or
 * waiting for their dependencies (`--after...`). What a stage request says
 * about them goes into the run's job data (see lifecycleJson); the scripts
 * keep such runs out of the fit index until they may start
 * (lua/includes/placeStaged.lua). This module validates those options and
 * words why a parked run waits.
 */
import { UsageError } from '../errors.js';
import { formatTime } from '../units/time.js';
import type { ArrayTally } from './array-tally.js';
import { quote } from '../text/quote.js';
import { validateRunId } from './names.js';

/**
 * Kinds of dependency, as Slurm's: `ok` every run completed (afterok),
 * `notok` every run ended otherwise (afternotok), `end` every run ended
 * (afterany), `any` at least one run completed. A whole array counts as
 * one dependency, as Slurm judges a job array: `ok` all its runs
 * completed, `notok` all ended and one at least did not complete, `end`
 * all ended; in an `any` group, one of its runs completed.
 */
export const DEPENDENCY_KINDS = ['ok', 'any', 'notok', 'end'] as const;
export type DependencyKind = (typeof DEPENDENCY_KINDS)[number];

/** A group of dependencies of one kind: every group must hold. */
export interface Dependency {
  kind: DependencyKind;
  /** Runs, by id. */
  ids: string[];
  /** Whole arrays, by id: every run of each (`--after ARRAY`, `--after @` after an array). */
  arrays?: string[];
}

/** When a run that failed on its own is staged again. */
export interface RetryPolicy {
  /** Most re-stages. */
  max: number;
  /** Only for these exit codes (none: any failure). */
  exitCodes?: number[];
  /** Wait before it may start again, ms; doubled per failure with `exponential`. */
  backoffMs?: number;
  exponential?: boolean;
  /** Status `timeout` counts as a failure too. */
  onTimeout?: boolean;
}

/** The lifecycle options of a stage request (StageRequest spreads these). */
export interface LifecycleOptions {
  /** Stage it held: it starts only after `fitq release`. */
  hold?: boolean;
  /** It may start at this time (epoch ms) at the earliest. */
  beginAt?: number;
  /** It may start this many ms after it is staged (the Redis server's clock) at the earliest. */
  delayMs?: number;
  /** Runs it waits for (every group must hold). */
  after?: Dependency[];
  /** A dependency that can never be met leaves it staged (saying so) instead of canceling it. */
  keepIfDependencyFails?: boolean;
  /** Stage it again when it fails on its own. */
  retry?: RetryPolicy;
}

export const MAX_DEPENDENCIES = 1000;
export const MAX_RETRY_ON_FAILURE = 100;

/** Job data keys this module owns (see run-data.ts runDataJson / dataFields). */
export const LIFECYCLE_DATA_KEYS = ['hold', 'begin', 'delay', 'after', 'keepIfDependencyFails', 'retry'] as const;

/** The job data entries of a request's lifecycle options (JSON), or undefined when it has none. Throws UsageError. */
export function lifecycleJson(options: LifecycleOptions): string | undefined {
  const data: Record<string, unknown> = {};
  if (options.hold) data.hold = true;
  if (options.beginAt !== undefined) {
    if (!Number.isSafeInteger(options.beginAt) || options.beginAt < 0) throw new UsageError(`invalid begin time ${quote(String(options.beginAt))}`);
    data.begin = options.beginAt;
  }
  if (options.delayMs !== undefined) {
    if (!Number.isSafeInteger(options.delayMs) || options.delayMs < 0) throw new UsageError(`invalid --delay ${quote(String(options.delayMs))}`);
    if (options.beginAt !== undefined) throw new UsageError('give --begin or --delay, not both');
    if (options.delayMs > 0) data.delay = options.delayMs;
  }
  const after = (options.after ?? []).filter((group) => group.ids.length > 0 || (group.arrays ?? []).length > 0);
  if (after.length > 0) {
    let count = 0;
    for (const group of after) {
      if (!(DEPENDENCY_KINDS as readonly string[]).includes(group.kind)) throw new UsageError(`unknown dependency kind ${quote(String(group.kind))}`);
      group.ids.forEach(validateRunId);
      (group.arrays ?? []).forEach(validateRunId);
      count += group.ids.length + (group.arrays ?? []).length;
    }
    if (count > MAX_DEPENDENCIES) throw new UsageError(`too many dependencies: ${count} (at most ${MAX_DEPENDENCIES}; an array counts as one: --after ARRAY)`);
    data.after = after.map(({ kind, ids, arrays }) => ({
      kind,
      ids: [...new Set(ids)],
      ...(arrays !== undefined && arrays.length > 0 ? { arrays: [...new Set(arrays)] } : {}),
    }));
  }
  if (options.keepIfDependencyFails) data.keepIfDependencyFails = true;
  if (options.retry && options.retry.max > 0) {
    const { max, exitCodes, backoffMs, exponential, onTimeout } = options.retry;
    if (!Number.isInteger(max) || max < 0 || max > MAX_RETRY_ON_FAILURE) {
      throw new UsageError(`expected --retry-on-failure to be an integer from 0 to ${MAX_RETRY_ON_FAILURE}, got ${quote(String(max))}`);
    }
    const retry: RetryPolicy = { max };
    if (exitCodes && exitCodes.length > 0) retry.exitCodes = exitCodes;
    if (backoffMs) retry.backoffMs = backoffMs;
    if (exponential) retry.exponential = true;
    if (onTimeout) retry.onTimeout = true;
    data.retry = retry;
  }
  return Object.keys(data).length > 0 ? JSON.stringify(data) : undefined;
}

/** What a stored run says about being parked (RunRecord fields). */
export interface ParkedFields {
  /** `held` for a held run. */
  status: string;
  beginAt?: number;
  waitingForDependencies?: boolean;
  /** Why its dependencies can never be met (kept with --keep-if-dependency-fails). */
  dependencyNever?: string;
  after?: Dependency[];
}

/** The arrays a run waits for as wholes. */
export function dependencyArrays(after: readonly Dependency[] | undefined): string[] {
  return [...new Set((after ?? []).flatMap((group) => group.arrays ?? []))];
}

/**
 * Why a parked staged run waits, in words; undefined for a run that is not
 * parked. `statusOf` gives a dependency's status (undefined: removed),
 * `tallyOf` how the runs of an array it waits for stand.
 */
export function parkedReason(
  run: ParkedFields & { id: string },
  statusOf: (id: string) => string | undefined,
  tallyOf: (array: string) => ArrayTally | undefined = () => undefined,
  now = Date.now(),
): string | undefined {
  if (run.status === 'held') return `held (fitq release ${run.id} to let it start)`;
  if (run.dependencyNever !== undefined) return `can never start: ${run.dependencyNever} (kept: --keep-if-dependency-fails)`;
  if (run.waitingForDependencies) {
    for (const group of run.after ?? []) {
      for (const id of group.ids) {
        const status = statusOf(id);
        if (status === 'staged' || status === 'running' || status === 'held') return `waiting for dependency ${id} (${status})`;
      }
      for (const array of group.arrays ?? []) {
        const tally = tallyOf(array);
        if (tally && tally.open > 0) return `waiting for array ${array} (${tally.open} of its ${tally.open + tally.ok + tally.notok} runs not ended)`;
      }
    }
    return 'waiting for its dependencies';
  }
  if (run.beginAt !== undefined) {
    const at = formatTime(run.beginAt, now);
    return run.beginAt > now ? `begins at ${at}` : `begins at ${at} (due: the next claim starts it)`;
  }
  return undefined;
}
