/**
 * The run record: a run as fitq shows it (RunRecord, the JSON of `fitq runs
 * --json`), its statuses and the filters that select runs. How a run is
 * stored, and read back into a RunRecord, is run-data.ts.
 */
import type { RunUsage } from './run-usage.js';
import type { Dependency, RetryPolicy } from './parked.js';
import type { StoredOutputFiles } from './output-files.js';

/**
 * `rejected`: a worker that requires signed runs refused it (unsigned or
 * altered); it never started. `timeout`: it ran past its time limit and its
 * worker killed it. `held`: a staged run a user held (`fitq hold`, `stage
 * --hold`), never claimed until released (stored as staged with `held` set).
 */
export const RUN_STATUSES = ['staged', 'held', 'running', 'completed', 'failed', 'canceled', 'lost', 'rejected', 'timeout'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const ENDED_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'canceled', 'lost', 'rejected', 'timeout'];

export interface RunRecord {
  id: string;
  status: RunStatus;
  /** The argv to run; with `shell`, one string run by `sh -c`. */
  command: string[];
  shell: boolean;
  cwd: string;
  /** Variables added to the worker's environment. */
  env: Record<string, string>;
  /** Demanded amounts, by resource name. */
  resources: Record<string, number>;
  /**
   * The same demands as text: as typed when staged ("gpu=1 mem=8G"), else in
   * human units; empty for none.
   */
  requires: string;
  priority: number;
  labels: Record<string, string>;
  /** Who staged it (a user name) and from which host; absent on runs staged before fitq recorded it. */
  user?: string;
  stagedFrom?: string;
  /** Epoch ms. */
  stagedAt: number;
  startedAt?: number;
  endedAt?: number;
  worker?: string;
  /** False while it runs on a worker that is not responding (see model/liveness.ts); absent otherwise. */
  workerResponding?: boolean;
  exitCode?: number;
  signal?: string;
  /** Why the run waits (staged) or why it ended the way it did. */
  reason?: string;
  /** GPU devices assigned to the run (its CUDA_VISIBLE_DEVICES), if any. */
  devices?: number[];
  /** GPU devices the run is pinned to (`fitq stage --gpus`), if any. */
  pinnedGpus?: number[];
  /** Times it may be re-staged when its worker dies under it. */
  retries?: number;
  /** Times it was re-staged, and why the last time. */
  restaged?: number;
  restagedReason?: string;
  /** URL its worker POSTs the run's record to when it ends (fitq stage --notify). */
  notify?: string;
  /** How many times the run was claimed; fences writers of older claims. */
  epoch?: number;
  /**
   * Time limit in ms: as staged (`--time-limit`), or, once running, the one
   * its worker applies (its --default-time-limit or --max-time-limit for a
   * run staged without one).
   */
  timeLimit?: number;
  /** While running with a limit: when it runs out (epoch ms, Redis's clock at the claim plus the limit). */
  deadline?: number;
  /** The signal the run gets ahead of its limit, as typed back (`SIGUSR1@2m`; default SIGTERM at the limit). */
  timeSignal?: string;
  seq: number;
  /** It may start at this time at the earliest (epoch ms): `--begin`, `--delay`, a retry's backoff. */
  beginAt?: number;
  /** Runs it waits for, in groups of one kind (every group must hold). */
  after?: Dependency[];
  /** Runs that wait for it. */
  dependents?: string[];
  /** Its dependencies are not met yet. */
  waitingForDependencies?: boolean;
  /** Why its dependencies can never be met, when it was staged with --keep-if-dependency-fails. */
  dependencyNever?: string;
  keepIfDependencyFails?: boolean;
  /** Re-staged when it fails on its own (`--retry-on-failure`). */
  retryOnFailure?: RetryPolicy;
  /** Times it was re-staged after failing on its own. */
  failures?: number;
  /** Times it was restarted (`fitq restart`). */
  restarted?: number;
  /** The run it was canceled for: a dependency that ended so that its own could never be met. */
  canceledFor?: string;
  /** Preemptible (`--preemptible`): its checkpoint signal and grace (`SIGUSR1@60s`), and how long it runs before it may be preempted (ms). */
  preempt?: string;
  preemptAfter?: number;
  /** Times it was preempted (each a `preempted` attempt). */
  preempted?: number;
  /** While it is being preempted: for which staged run, and since when (epoch ms). */
  preempting?: { for: string; since: number };
  /** A signed run's last change asked for and admitted (cancel, hold, …): by whom, when (epoch ms), and why a worker refused it, if it did. */
  lastRequest?: { op: string; by: string; at: number; refused?: string };
  /** Its earlier attempts (re-staged by a retry, a restart or its worker's death), oldest first; read by getRun. */
  attempts?: RunAttempt[];
  /** The array it is part of (`fitq stage --array/--param`), its index there and its parameters. */
  array?: string;
  arrayIndex?: number;
  params?: Record<string, string>;
  /** Files the worker also writes its output to (`fitq stage --output/--error`), absolute. */
  output?: StoredOutputFiles;
  /** What it used (CPU time, peak memory, wall time, GPU memory), as its worker measured it: so far while it runs. */
  usage?: RunUsage;
}

/** One earlier attempt of a run (`runs:<id>:attempts`). */
export interface RunAttempt {
  attempt: number;
  worker?: string;
  startedAt?: number;
  endedAt?: number;
  status: string;
  exitCode?: number;
  signal?: string;
  reason?: string;
  usage?: RunUsage;
}

/**
 * Every attempt of a run, oldest first: the earlier ones (its restart and
 * retry history), then the current one once it started or ended, as the
 * history records attempts.
 */
export function everyAttempt(run: RunRecord): RunAttempt[] {
  const earlier = run.attempts ?? [];
  if (run.startedAt === undefined && run.endedAt === undefined) return [...earlier];
  const current: RunAttempt = { attempt: (earlier[earlier.length - 1]?.attempt ?? earlier.length) + 1, status: run.status };
  if (run.worker !== undefined) current.worker = run.worker;
  if (run.startedAt !== undefined) current.startedAt = run.startedAt;
  if (run.endedAt !== undefined) current.endedAt = run.endedAt;
  if (run.exitCode !== undefined) current.exitCode = run.exitCode;
  if (run.signal !== undefined) current.signal = run.signal;
  if (run.reason !== undefined && run.status !== 'running') current.reason = run.reason;
  if (run.usage !== undefined) current.usage = run.usage;
  return [...earlier, current];
}

/** Which runs to list, cancel or remove: every given condition must hold. */
export interface RunFilter {
  /** Any of these statuses (none given: any status). */
  statuses?: readonly RunStatus[];
  /** Every one of these labels, with exactly this value. */
  labels?: Readonly<Record<string, string>>;
  /** Runs of this array (its full id). */
  array?: string;
  /** Runs this user staged. */
  user?: string;
}

export function matchesFilter(run: RunRecord, filter: RunFilter): boolean {
  if (filter.statuses && filter.statuses.length > 0 && !filter.statuses.includes(run.status)) return false;
  if (filter.array !== undefined && run.array !== filter.array) return false;
  if (filter.user !== undefined && run.user !== filter.user) return false;
  return Object.entries(filter.labels ?? {}).every(([key, value]) => Object.hasOwn(run.labels, key) && run.labels[key] === value);
}

export function isEnded(run: RunRecord): boolean {
  return (ENDED_STATUSES as readonly string[]).includes(run.status);
}
