/**
 * How a run is stored, and read back into a RunRecord (run-record.ts): the
 * entry points, each a thin call into the field table's codec
 * (run-fields.ts: run-codec.ts both ways for the job data, run-decode.ts
 * into a RunRecord).
 *
 * A run is a BullMQ job. What it is (command, demands, ...) is the job's
 * `data`, JSON; what happens to it (status, worker, claim epoch, ...) are
 * fields of the job hash beside BullMQ's own. In code a run is one flat
 * record of strings (`runFields`): the job hash with its data's fields
 * spread over it, as they were signed.
 */
import type { StoredOutputFiles } from './output-files.js';
import type { Dependency, RetryPolicy } from './parked.js';
import { encodeRunData, runDataFields, stagedRunFields } from './run-codec.js';
import { decodeRun } from './run-decode.js';
import type { RunRecord } from './run-record.js';

/**
 * What a run is, as its job's `data` holds it (the `data` fields of
 * run-fields.ts): a field at its default (no shell, cwd "", no env, labels
 * or demands, priority 0) is left out (run-codec.ts); runs stored before
 * hold them all.
 */
export interface RunData {
  command: string[];
  shell?: boolean;
  cwd?: string;
  env?: Record<string, string>;
  labels?: Record<string, string>;
  /** Exact demands, `name=amount` sorted by name ("cpu=1 mem=500000000"). */
  resources?: string;
  /** The demands as typed ("mem=0.5G cpu=1"), if typed. */
  requires?: string;
  /** GPU devices it is pinned to ("0,1"), if any. */
  gpus?: string;
  retries?: number;
  /** Time limit in ms, if any. */
  timeLimit?: number;
  /** `SIGUSR1@2m`, if given. */
  timeSignal?: string;
  priority?: number;
  signature?: string;
  notify?: string;
  /** Lifecycle options (parked.ts): hold, begin, delay, after, keepIfDependencyFails, retry. */
  hold?: boolean;
  begin?: number;
  delay?: number;
  after?: Dependency[];
  keepIfDependencyFails?: boolean;
  retry?: RetryPolicy;
  /** Its index in its array, and its parameters (the array's id is the job's `array` field). */
  arrayIndex?: number;
  params?: Record<string, string>;
  output?: StoredOutputFiles;
  /** Preemptible: its checkpoint signal and grace (`SIGUSR1@60s`), and how long it runs before it may be preempted (ms). */
  preempt?: string;
  preemptAfter?: number;
}

/** The job data (JSON text) of a run about to be staged, from its flat fields (run-codec.ts). */
export function runDataJson(fields: Readonly<Record<string, string>>, priority: number): string {
  return encodeRunData({ ...fields, priority: String(priority) });
}

/** The flat fields of a run's job data, exactly as they were staged (and signed): run-codec.ts. */
export const dataFields = runDataFields;

/** A run as it was staged and signed: its data's fields and who staged it (run-codec.ts). */
export function stagedFields(hash: Readonly<Record<string, string>>): Record<string, string> {
  return stagedRunFields(fitqRunData(hash), hash);
}

/**
 * A run's job data as fitq wrote it: its `runData`, which BullMQ never
 * writes (job.updateData rewrites `data` only, and reconcileRuns puts that
 * back), else `data` for a run staged before fitq kept both.
 */
export function fitqRunData(hash: { readonly runData?: string | null; readonly data?: string | null }): string | undefined {
  return hash.runData ?? hash.data ?? undefined;
}

/** A run as one flat record: its job hash (as HGETALL gives it) with its data's fields (as fitq wrote them). */
export function runFields(runId: string, hash: Readonly<Record<string, string>>): Record<string, string> {
  return { ...hash, ...runDataFields(fitqRunData(hash)), id: runId };
}

export { formatDemands } from './run-decode.js';

/** Builds a RunRecord from a run's flat record (runFields): run-decode.ts. */
export function parseRunFields(fields: Readonly<Record<string, string | undefined>>): RunRecord {
  return decodeRun(fields).run;
}
