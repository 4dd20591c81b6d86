/**
 * Upkeep: reaping dead workers (their runs end lost, or are staged again)
 * and reconciling fitq's index with what BullMQ's API did to the queue.
 * Workers do both as they poll; commands that read do them first, so what
 * they read is current. Both write: while Redis is out of memory they are
 * skipped, and a user Redis refuses EVAL (a reader) skips them from then on,
 * told once (READ_ONLY_NOTE); either way the read goes on.
 */
import { isOutOfMemory } from '../redis/connection.js';
import type { ReconcileAction } from '../queue/scripts.js';
import type { QueueContext } from './context.js';

/**
 * Said to a user Redis refuses EVAL (the reader's rule in docs/security.md):
 * what it reads is as Redis holds it, without the upkeep fitq does before
 * reading. Live workers do that upkeep as they poll.
 */
export const READ_ONLY_NOTE =
  "this Redis user may only read (Redis refused it EVAL): fitq did not reap dead workers or catch up with BullMQ's API before reading; live workers do both as they poll";

/** Dead workers reaped per script call. */
const REAP_BATCH = 50;

/** Jobs and events looked at per reconcile call, and the most calls one reconcile makes. */
const RECONCILE_BUDGET = 500;
const RECONCILE_MAX_CALLS = 10_000;

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
 * see reconcileRuns-12.lua. Workers do it on every poll; `fitq runs` before
 * it lists, and getRun (`fitq runs show`) before it reads. Returns what it
 * did; stops while Redis is out of memory (it writes), so reads go on.
 */
export async function reconcile(ctx: QueueContext): Promise<ReconcileAction[]> {
  const actions: ReconcileAction[] = [];
  for (let calls = 0; calls < RECONCILE_MAX_CALLS; calls++) {
    const result = await runUpkeep(ctx, () => ctx.scripts.reconcileRuns(RECONCILE_BUDGET));
    if (!result) break;
    actions.push(...result.actions);
    if (!result.more) break;
  }
  return actions;
}

/**
 * Has reconcileRuns put back the job data BullMQ rewrote (job.updateData)
 * of runs a read found so: nothing else shows it. What fitq reads is its
 * own copy, as the run was staged or updated, either way.
 */
export async function putBackData(ctx: QueueContext, runIds: readonly string[]): Promise<void> {
  for (let i = 0; i < runIds.length; i += RECONCILE_BUDGET) {
    await runUpkeep(ctx, () => ctx.scripts.reconcileRuns(RECONCILE_BUDGET, runIds.slice(i, i + RECONCILE_BUDGET)));
  }
}
