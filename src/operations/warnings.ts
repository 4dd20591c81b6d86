/**
 * Warnings for staged runs no live worker could ever start, as judged where
 * they are now (one explainRuns call): `run X staged, but no live worker
 * can run it yet: …`, one per reason (or per demand shape, before staging).
 */
import { runShape, type PreparedRun } from '../model/stage.js';
import { whyWaiting } from '../model/why-waiting.js';
import type { QueueContext } from './context.js';

/**
 * One warning per reason for the staged runs that no live worker could
 * ever start, as judged where they are now (one explainRuns call), as
 * `stage` warns of its runs: `run X updated, but no live worker can run it
 * yet: …`. Runs no longer staged are left out.
 */
export async function unrunnableWarnings(ctx: QueueContext, runIds: readonly string[], done: string): Promise<string[]> {
  if (runIds.length === 0) return [];
  const verdicts = await ctx.scripts.explainRuns(runIds);
  const byReason = new Map<string, string[]>();
  verdicts.forEach((verdict, i) => {
    const judged = verdict && whyWaiting(verdict, { ignorePause: true });
    if (!judged || judged.runnable) return;
    byReason.set(judged.reason, [...(byReason.get(judged.reason) ?? []), runIds[i]!]);
  });
  return [...byReason].map(([reason, ids]) => unrunnableWarning(ids, done, reason));
}

/** One warning per shape of the staged runs that no live worker could ever start (one explainRuns call). */
export async function stageWarnings(ctx: QueueContext, runs: PreparedRun[]): Promise<string[]> {
  const byShape = new Map<string, PreparedRun[]>();
  for (const run of runs) {
    const shape = runShape(run);
    const group = byShape.get(shape);
    if (group) group.push(run);
    else byShape.set(shape, [run]);
  }
  const verdicts = await ctx.scripts.explainRuns([], [...byShape.keys()]);
  const warnings: string[] = [];
  for (const [i, group] of [...byShape.values()].entries()) {
    const verdict = whyWaiting(verdicts[i]!, { ignorePause: true });
    if (verdict.runnable) continue;
    warnings.push(unrunnableWarning(group.map((run) => run.id), 'staged', verdict.reason));
  }
  return warnings;
}

/** `run X staged, but no live worker can run it yet: …`, `2 runs (X, ...) updated, but …`. */
function unrunnableWarning(ids: readonly string[], done: string, reason: string): string {
  const which = ids.length === 1 ? `run ${ids[0]!}` : `${ids.length} runs (${ids[0]!}, ...)`;
  return `${which} ${done}, but no live worker can run ${ids.length === 1 ? 'it' : 'them'} yet: ${reason}`;
}
