/**
 * The dependency graph drawn as text (`fitq runs --tree`), from the edges
 * model/dependencies.ts finds among the listed runs.
 */
import { dependencyEdges, dependentsOf } from '../model/dependencies.js';
import type { RunRecord } from '../model/run-record.js';

/**
 * The dependency graph as an ASCII tree, as pstree draws processes: each
 * run under the runs it waits for (a run with several dependencies appears
 * under each, marked `^` after the first time, its subtree drawn once).
 * `describe` gives a run's line.
 */
export function renderTree(runs: readonly RunRecord[], describe: (run: RunRecord) => string): string[] {
  const byId = new Map(runs.map((run) => [run.id, run]));
  const edges = dependencyEdges(runs);
  const dependents = dependentsOf(runs);
  const kinds = new Map(edges.map((edge) => [`${edge.dependency}>${edge.run}`, edge.kind]));
  const waiting = new Set(edges.filter((edge) => byId.has(edge.dependency)).map((edge) => edge.run));
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
    if (waiting.has(run.id)) continue;
    draw(run.id, '', true, undefined, 0);
  }
  // Runs only reachable through a cycle (never staged so, but written by hand).
  for (const run of runs) if (!drawn.has(run.id)) draw(run.id, '', true, undefined, 0);
  return lines;
}
