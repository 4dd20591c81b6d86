/**
 * Enforces a running run's time limit (time-limit.ts says which, and keeps
 * the time): its time signal ahead of the limit, if asked; at the limit, its
 * stop for `timeout` and its termination, unless it is already stopping for
 * something else or its end is being recorded.
 */
import type { Logger } from 'pino';
import type { ActiveRun } from './active-run.js';
import type { RunProcess } from './child.js';
import { requestStop } from './run-stop.js';
import { armTimeLimit, type RunTimeLimit } from './time-limit.js';

/** Arms `limit` for `run`, started now; returns what disarms it. */
export function watchTimeLimit(run: ActiveRun, runProcess: RunProcess, limit: RunTimeLimit, killGraceMs: number, log: Logger): () => void {
  return armTimeLimit(limit, {
    signal: (signal) => {
      if (runProcess.signal(signal)) log.info({ signal }, `Run ${run.runId} sent ${signal} ahead of its time limit`);
    },
    expire: (reason, signal) => {
      // Canceled, given up or ending already: it ends as that says, not timed out, and is not signalled again.
      if (run.stop !== undefined || run.phase === 'ending') return;
      requestStop(run, { cause: 'timeout', reason });
      log.info({ signal }, `Run ${run.runId} ${reason}: sending ${signal}, SIGKILL after ${killGraceMs / 1000}s`);
      runProcess.terminate(killGraceMs, signal);
    },
  });
}
