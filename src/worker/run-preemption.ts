/**
 * A run a claim preempted (lua/includes/preemption/): its checkpoint signal
 * now, its stop once its grace is over (SIGTERM, SIGKILL after the worker's
 * grace), or its stop at once without a grace. It ends `preempted`: back to
 * staged at its place (run-ending.ts). At the end of the grace Redis says
 * whether the run it made room for still waits; if not, it runs on.
 */
import type { Logger } from 'pino';
import { preemptTerms } from '../model/preemption.js';
import type { ActiveRun } from './active-run.js';
import type { ExecutorContext } from './executor-context.js';
import { requestStop } from './run-stop.js';

/** Preempts `run` (running here, not stopping) for `forRun`. */
export function preemptRun(ctx: ExecutorContext, run: ActiveRun, forRun: string, log: Logger): void {
  const terms = preemptTerms(run.run);
  requestStop(run, { cause: 'preempt', reason: `preempted for run ${forRun}` });
  const signal = terms.signal as NodeJS.Signals;
  if (terms.beforeMs === 0) {
    run.process?.terminate(ctx.killGraceMs, signal);
  } else {
    run.process?.signal(signal);
    // (A run not let go yet is terminated when it is: see Executor.execute.)
    setTimeout(() => void endGrace(ctx, run, forRun, log), terms.beforeMs).unref();
  }
  log.info(
    { signal, graceMs: terms.beforeMs },
    `Run ${run.runId} preempted for run ${forRun}: ${terms.beforeMs === 0 ? `sending ${signal}` : `sent ${signal}, stopping it in ${terms.beforeMs / 1000}s`}`,
  );
}

/**
 * The end of a preempted run's grace: it is stopped, unless the run it made
 * room for no longer waits (started, held, canceled, removed), when it runs
 * on and the worker claims again. If Redis cannot say, it is stopped, as
 * the preemption asked.
 */
async function endGrace(ctx: ExecutorContext, run: ActiveRun, forRun: string, log: Logger): Promise<void> {
  // Canceled, given up or ended meanwhile: that holds.
  const settled = (): boolean => run.stop?.cause !== 'preempt' || run.phase === 'ending';
  if (settled()) return;
  const verdict = await ctx.scripts.checkPreemption(ctx.workerName, ctx.token, run.runId, run.epoch).catch(() => 'stop' as const);
  if (settled()) return;
  if (verdict === 'keep') {
    run.stop = undefined;
    log.info(`Run ${run.runId} runs on: run ${forRun} no longer waits for it (its preemption was dropped)`);
    ctx.onRunEnded();
    return;
  }
  run.process?.terminate(ctx.killGraceMs);
}
