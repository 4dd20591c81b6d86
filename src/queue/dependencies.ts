/**
 * Dependencies between runs (`fitq stage --after…`): resolving the ids a
 * stager gives, what a cancellation would cancel with it (`fitq cancel
 * --dry-run`), and the graph (`fitq runs --tree`). The scripts judge them
 * (lua/includes/depsState.lua); this module mirrors that judgement to
 * predict, never to decide.
 */
import { UsageError } from '../errors.js';
import type { FitqClient } from './client.js';
import { quote } from './names.js';
import type { Dependency } from './parked.js';
import { ENDED_STATUSES, type RunRecord } from './run-record.js';
import type { StageRequest } from './stage.js';

/**
 * The requests with every dependency a full run id: a unique prefix of a
 * run id is resolved; an id staged by the same call stays as it is (the
 * stage script checks it comes earlier: no cycle). An unknown id is a
 * UsageError naming it.
 */
export async function resolveDependencies(client: FitqClient, requests: readonly StageRequest[]): Promise<StageRequest[]> {
  const batch = new Set(requests.flatMap((request) => (request.runId === undefined ? [] : [request.runId])));
  const refs = [...new Set(requests.flatMap((request) => (request.after ?? []).flatMap((group) => group.ids)))].filter((id) => !batch.has(id));
  if (refs.length === 0) return [...requests];
  const resolved = new Map<string, string>();
  try {
    const ids = await client.resolveRunIds(refs);
    refs.forEach((ref, i) => resolved.set(ref, ids[i]!));
  } catch (error) {
    if (error instanceof UsageError && /^unknown run /.test(error.message)) {
      throw new UsageError(`${error.message} in a dependency (--after): nothing was staged`, { cause: error });
    }
    throw error;
  }
  return requests.map((request) =>
    request.after === undefined
      ? request
      : { ...request, after: request.after.map((group) => ({ kind: group.kind, ids: group.ids.map((id) => resolved.get(id) ?? id) })) },
  );
}

const ENDED = new Set<string>(ENDED_STATUSES);

/** Whether a run's dependencies can never be met, given each dependency's status (undefined: removed). */
export function dependenciesFail(after: readonly Dependency[], statusOf: (id: string) => string | undefined): boolean {
  for (const group of after) {
    const statuses = group.ids.map(statusOf);
    if (group.kind === 'any') {
      if (!statuses.includes('completed') && statuses.every((status) => status === undefined || ENDED.has(status))) return true;
      continue;
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
  for (let changed = true; changed; ) {
    changed = false;
    for (const run of runs) {
      if (canceled.has(run.id) || !run.waitingForDependencies || run.keepIfDependencyFails || !run.after) continue;
      if (run.status !== 'staged' && run.status !== 'held') continue;
      if (dependenciesFail(run.after, statusOf)) {
        canceled.add(run.id);
        order.push(run);
        changed = true;
      }
    }
  }
  return order;
}

/** An edge of the dependency graph: `run` waits for `dependency` (of this kind). */
export interface DependencyEdge {
  dependency: string;
  run: string;
  kind: Dependency['kind'];
}

export function dependencyEdges(runs: readonly RunRecord[]): DependencyEdge[] {
  return runs.flatMap((run) => (run.after ?? []).flatMap((group) => group.ids.map((dependency) => ({ dependency, run: run.id, kind: group.kind }))));
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

/**
 * The dependency graph as an ASCII tree, as pstree draws processes: each
 * run under the runs it waits for (a run with several dependencies appears
 * under each, marked `^` after the first time, its subtree drawn once).
 * `describe` gives a run's line.
 */
export function renderTree(runs: readonly RunRecord[], describe: (run: RunRecord) => string): string[] {
  const byId = new Map(runs.map((run) => [run.id, run]));
  const dependents = dependentsOf(runs);
  const kinds = new Map(dependencyEdges(runs).map((edge) => [`${edge.dependency}>${edge.run}`, edge.kind]));
  const lines: string[] = [];
  const drawn = new Set<string>();
  const draw = (id: string, prefix: string, last: boolean, parent: string | undefined, depth: number): void => {
    const run = byId.get(id);
    const branch = depth === 0 ? '' : last ? '└─ ' : '├─ ';
    const kind = parent === undefined ? '' : ` [after-${kinds.get(`${parent}>${id}`) ?? 'ok'}]`;
    const text = run ? describe(run) : `${id} (removed)`;
    if (drawn.has(id)) {
      lines.push(`${prefix}${branch}${id}${kind} ^`);
      return;
    }
    drawn.add(id);
    lines.push(`${prefix}${branch}${text}${kind}`);
    const children = dependents.get(id) ?? [];
    const childPrefix = depth === 0 ? '' : prefix + (last ? '   ' : '│  ');
    children.forEach((child, i) => draw(child, childPrefix, i === children.length - 1, id, depth + 1));
  };
  for (const run of runs) {
    // Roots: runs that wait for no listed run.
    if ((run.after ?? []).some((group) => group.ids.some((id) => byId.has(id)))) continue;
    draw(run.id, '', true, undefined, 0);
  }
  // Runs only reachable through a cycle (never staged so, but written by hand).
  for (const run of runs) if (!drawn.has(run.id)) draw(run.id, '', true, undefined, 0);
  return lines;
}

/** A dependency flag's value: run ids separated by commas. */
export function splitIds(flag: string, text: string): string[] {
  const ids = text.split(',').map((id) => id.trim()).filter((id) => id !== '');
  if (ids.length === 0) throw new UsageError(`expected ${flag} to name runs, got ${quote(text)}`);
  return ids;
}
