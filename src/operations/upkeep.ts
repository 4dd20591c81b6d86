/**
 * Upkeep: reaping dead workers (their runs end lost, or are staged again)
 * and reconciling fitq's index with what BullMQ's API did to the queue.
 * Workers do both as they poll; commands that change state do what they
 * need (staging reaps, updating reconciles), and so do the waits that
 * must see a dead worker's runs end (`fitq wait`, cancel and rm waiting
 * for a run's end). Reads never do: they show what upkeep has yet to do
 * as it will leave it (model/upkeep-view.ts). Both write: while Redis is
 * out of memory they are skipped, and a user Redis refuses EVAL (a reader)
 * skips them from then on, told once (READ_ONLY_NOTE); either way the
 * command goes on.
 */
import { isOutOfMemory } from '../redis/refusals.js';
import { REAP_BATCH } from '../queue/upkeep-budgets.js';
import type { ReconcileAction } from '../queue/run-calls.js';
import type { QueueContext } from './context.js';

/**
 * Said to a user Redis refuses EVAL (the reader's rule in docs/security.md)
 * by a command that would have done upkeep (`fitq wait` reaps dead workers
 * so their runs end): it goes on without. Live workers do that upkeep as
 * they poll.
 */
export const READ_ONLY_NOTE =
  'this Redis user may only read (Redis refused it EVAL): fitq did not reap workers whose lease ran out; live workers do as they poll';

/** The most reconcile calls one reconcile makes (each looks at RECONCILE_BUDGET jobs, about). */
const RECONCILE_MAX_CALLS = 50_000;

/** Whether Redis refused the user a script call itself (NOPERM for EVAL or EVALSHA), not a command inside one. */
function isEvalRefused(error: unknown): boolean {
  return error instanceof Error && /^NOPERM\b.*'eval(sha)?' command/i.test(error.message);
}

/**
 * Runs an upkeep script (reaping, reconciling); undefined when it cannot
 * run: while Redis is out of memory (upkeep writes), and, once noted, when
 * Redis refuses this user EVAL. Either way a reader still gets its answer.
 */
export async function runUpkeep<T>(ctx: QueueContext, call: () => Promise<T>): Promise<T | undefined> {
  if (ctx.upkeep.refused) return undefined;
  try {
    return await call();
  } catch (error) {
    if (isOutOfMemory(error)) return undefined;
    if (!isEvalRefused(error)) throw error;
    ctx.upkeep.refused = true;
    ctx.upkeep.onNote?.(READ_ONLY_NOTE);
    return undefined;
  }
}

/**
 * Reaps every worker whose lease ran out (a batch per script call); returns
 * ms until the next lease runs out. Skipped (undefined) while Redis is out
 * of memory: reaping writes, and what is read meanwhile shows a dead
 * worker's runs as not responding.
 */
export async function reap(ctx: QueueContext): Promise<number | undefined> {
  for (;;) {
    const result = await runUpkeep(ctx, () => ctx.scripts.reapWorkers(REAP_BATCH));
    if (!result) return undefined;
    if (result.reaped.length < REAP_BATCH) return result.msUntilNext;
  }
}

/**
 * Brings fitq's index in line with what BullMQ's API (or Bull Board) did to
 * the namespace's queue: runs BullMQ retried are staged again, runs it
 * deleted are forgotten, jobs added without fitq's run data end rejected,
 * priorities it changed are applied (unsigned runs) or undone (signed);
 * see reconcileRuns-28.lua. Workers do it on every poll, `fitq update`
 * before it edits. Returns what it did; stops while Redis is out of memory
 * (it writes).
 */
export async function reconcile(ctx: QueueContext): Promise<ReconcileAction[]> {
  const actions: ReconcileAction[] = [];
  for (let calls = 0; calls < RECONCILE_MAX_CALLS; calls++) {
    const result = await runUpkeep(ctx, () => ctx.scripts.reconcileRuns());
    if (!result) break;
    actions.push(...result.actions);
    if (!result.more) break;
  }
  return actions;
}
