/**
 * Dependencies between runs (`fitq stage --after…`): what a cancellation
 * would cancel with it (`fitq cancel --dry-run`), and the graph (`fitq runs
 * --tree`); the ids a stager gives are resolved by
 * operations/dependencies.ts. The scripts judge them
 * (lua/includes/depsState.lua); this module mirrors that judgement to
 * predict, never to decide.
 */
import { UsageError } from '../errors.js';
import { tallyOfRuns, type ArrayTally } from './array-tally.js';
import { quote } from '../text/quote.js';
import type { Dependency } from './parked.js';
import { ENDED_STATUSES, type RunRecord } from './run-record.js';

const ENDED = new Set<string>(ENDED_STATUSES);

/**
 * Whether a run's dependencies can never be met, given each dependency's
 * status (undefined: removed) and how the runs of each array it waits for
 * stand (undefined: gone).
 */
export function dependenciesFail(
  after: readonly Dependency[],
  statusOf: (id: string) => string | undefined,
  tallyOf: (array: string) => ArrayTally | undefined = () => undefined,
): boolean {
  for (const group of after) {
    const statuses = group.ids.map(statusOf);
    const tallies = (group.arrays ?? []).map(tallyOf);
    if (group.kind === 'any') {
      const completed = statuses.includes('completed') || tallies.some((tally) => tally !== undefined && tally.ok > 0);
      const open = statuses.some((status) => status !== undefined && !ENDED.has(status)) || tallies.some((tally) => tally !== undefined && tally.open > 0);
      if (!completed && !open) return true;
      continue;
    }
    for (const tally of tallies) {
      if (tally === undefined) return true;
      if (group.kind === 'ok' && tally.notok > 0) return true;
      if (group.kind === 'notok' && tally.open === 0 && tally.notok === 0) return true;
    }
    for (const status of statuses) {
      if (status === undefined) return true;
      if (!ENDED.has(status)) continue;
      if (group.kind === 'ok' && status !== 'completed') return true;
      if (group.kind === 'notok' && status === 'completed') return true;
    }
  }
  return false;
}

/**
 * What canceling `ids` would cancel: those not ended yet, then (in the order
 * they would go) every run waiting for its dependencies that could then
 * never meet them and was not staged with --keep-if-dependency-fails, and
 * theirs in turn.
 */
export function cancelCascade(runs: readonly RunRecord[], ids: readonly string[]): RunRecord[] {
  const byId = new Map(runs.map((run) => [run.id, run]));
  const canceled = new Set<string>();
  const order: RunRecord[] = [];
  for (const id of ids) {
    const run = byId.get(id);
    if (run && !ENDED.has(run.status) && !canceled.has(id)) {
      canceled.add(id);
      order.push(run);
    }
  }
  const statusOf = (id: string): string | undefined => (canceled.has(id) ? 'canceled' : byId.get(id)?.status);
  // An array's runs as listed (one removed before is not counted).
  const tallyOf = (array: string): ArrayTally | undefined => {
    const members = runs.filter((run) => run.array === array);
    return members.length === 0 ? undefined : tallyOfRuns(members.map((run) => statusOf(run.id)!), (status) => ENDED.has(status));
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (const run of runs) {
      if (canceled.has(run.id) || !run.waitingForDependencies || run.keepIfDependencyFails || !run.after) continue;
      if (run.status !== 'staged' && run.status !== 'held') continue;
      if (dependenciesFail(run.after, statusOf, tallyOf)) {
        canceled.add(run.id);
        order.push(run);
        changed = true;
      }
    }
  }
  return order;
}

/**
 * The runs `fitq restart --cascade` would stage again besides the ended
 * runs named: the dependents canceled because of one (`canceledFor` its id,
 * or `array:<id>` of its array), and theirs in turn, as restartRuns-*.lua
 * reaches them. For a preview: the script decides.
 */
export function restartCascade(runs: readonly RunRecord[], ids: readonly string[]): RunRecord[] {
  const byId = new Map(runs.map((run) => [run.id, run]));
  const reached = new Set(ids.filter((id) => ENDED.has(byId.get(id)?.status ?? '')));
  const arrays = new Set([...reached].flatMap((id) => byId.get(id)?.array ?? []));
  const order: RunRecord[] = [];
  for (let changed = true; changed; ) {
    changed = false;
    for (const run of runs) {
      const cause = run.canceledFor;
      if (reached.has(run.id) || run.status !== 'canceled' || cause === undefined) continue;
      if (!reached.has(cause) && !(cause.startsWith('array:') && arrays.has(cause.slice('array:'.length)))) continue;
      reached.add(run.id);
      if (run.array !== undefined) arrays.add(run.array);
      order.push(run);
      changed = true;
    }
  }
  return order;
}

/** An edge of the dependency graph: `run` waits for `dependency` (of this kind; as a run of `array`, when it waits for the whole array). */
export interface DependencyEdge {
  dependency: string;
  run: string;
  kind: Dependency['kind'];
  array?: string;
}

/** The graph's edges among the listed runs: a run waiting for a whole array waits for each of its runs listed. */
export function dependencyEdges(runs: readonly RunRecord[]): DependencyEdge[] {
  const members = new Map<string, string[]>();
  for (const run of runs) if (run.array !== undefined) members.set(run.array, [...(members.get(run.array) ?? []), run.id]);
  return runs.flatMap((run) =>
    (run.after ?? []).flatMap((group) => [
      ...group.ids.map((dependency) => ({ dependency, run: run.id, kind: group.kind })),
      ...(group.arrays ?? []).flatMap((array) => (members.get(array) ?? []).map((dependency) => ({ dependency, run: run.id, kind: group.kind, array }))),
    ]),
  );
}

/** The runs that wait for each run, from the listed runs' dependencies. */
export function dependentsOf(runs: readonly RunRecord[]): Map<string, string[]> {
  const dependents = new Map<string, string[]>();
  for (const { dependency, run } of dependencyEdges(runs)) {
    const list = dependents.get(dependency);
    if (list) {
      if (!list.includes(run)) list.push(run);
    } else dependents.set(dependency, [run]);
  }
  return dependents;
}

/** A dependency flag's value: run ids separated by commas. */
export function splitIds(flag: string, text: string): string[] {
  const ids = text.split(',').map((id) => id.trim()).filter((id) => id !== '');
  if (ids.length === 0) throw new UsageError(`expected ${flag} to name runs, got ${quote(text)}`);
  return ids;
}
