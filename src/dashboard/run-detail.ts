/**
 * The dashboard's run page, as data: the run's record (as `fitq runs show`
 * gives it, env by names only), the runs it waits for and the runs waiting
 * for it with their states, its attempts (earlier ones from its restart and
 * retry history, then the current one), and the tail of its output.
 * Rendering is pages/run.ts's; following the output live is followLog's.
 */
import type { FitqClient } from '../client.js';
import type { LogEntry } from '../model/logs.js';
import type { DependencyKind } from '../model/parked.js';
import { everyAttempt, type RunAttempt, type RunRecord } from '../model/run-record.js';

/** Lines of output the page shows at first; the live tail adds to them. */
export const TAIL_LINES = 200;

/** A run it waits for, or that waits for it, and its status now (`removed`: gone). */
export interface RelatedRun {
  id: string;
  status: string;
}

export interface DependencyGroup {
  kind: DependencyKind;
  runs: RelatedRun[];
}

/** A line of output, or the mark of a new attempt. */
export type TailEntry = Extract<LogEntry, { kind: 'line' | 'restaged' }>;

export interface RunDetail {
  run: RunRecord;
  dependencies: DependencyGroup[];
  dependents: RelatedRun[];
  /** Every attempt, oldest first: the earlier ones, then the current one (once it started or ended). */
  attempts: RunAttempt[];
  /** The last TAIL_LINES lines of output (and where it was staged again), and how many earlier ones are not shown. */
  tail: TailEntry[];
  earlierLines: number;
  /** The id of the last log entry read: the live tail goes on after it ("0": none yet). */
  logAfter: string;
}

/** Statuses of runs by id, as a read shows them, one read for all; a removed run is `removed`. */
async function statusesOf(client: FitqClient, ids: readonly string[]): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  if (ids.length === 0) return statuses;
  for (const run of await client.readRuns(ids)) statuses.set(run.id, run.status);
  for (const id of ids) if (!statuses.has(id)) statuses.set(id, 'removed');
  return statuses;
}

/** Everything the run page shows of a run (its id, or a unique prefix of one: a UsageError otherwise). */
export async function loadRunDetail(client: FitqClient, ref: string, tailLines = TAIL_LINES): Promise<RunDetail> {
  const run = await client.getRun(await client.resolveRunId(ref));
  const groups = run.after ?? [];
  const dependents = run.dependents ?? [];
  const statuses = await statusesOf(client, [...new Set([...groups.flatMap((group) => group.ids), ...dependents])]);
  const related = (id: string): RelatedRun => ({ id, status: statuses.get(id) ?? 'removed' });
  const entries = await client.readLog(run.id);
  const lines = entries.filter((entry): entry is TailEntry => entry.kind === 'line' || entry.kind === 'restaged');
  const tail = lines.slice(Math.max(0, lines.length - tailLines));
  return {
    run,
    dependencies: groups.map((group) => ({ kind: group.kind, runs: group.ids.map(related) })),
    dependents: dependents.map(related),
    attempts: everyAttempt(run),
    tail,
    earlierLines: lines.length - tail.length,
    logAfter: entries[entries.length - 1]?.id ?? '0',
  };
}
