/** A run the executor holds: claimed for it, then started, running, and ending. */
import type { Logger } from 'pino';
import type { RunProcess } from './child.js';
import type { RunStop } from './run-stop.js';
import type { ClaimedRun } from '../model/claimed-run.js';
import type { RunUsage } from '../model/run-usage.js';

export type { ClaimedRun };

/**
 * Where a run is in its life here, which is not why it stops (see RunStop):
 * `starting` (checked, its files opened, its process spawned and held at
 * its gate), `running` (its process let go), `ending` (its process is gone,
 * or never came, and its end is being recorded).
 */
export type RunPhase = 'starting' | 'running' | 'ending';

export interface ActiveRun extends ClaimedRun {
  phase: RunPhase;
  /** Why the worker is stopping it, or keeps it from starting, if it is: the first asked, see requestStop. */
  stop?: RunStop;
  process?: RunProcess;
  /** When its process was let go (performance.now()). */
  startedAtMs?: number;
  /** Its log lines carry its id. */
  log?: Logger;
  /** The token in its processes' environment (FITQ_RUN_TOKEN), once spawned: how its processes are told from others (GPU probe, escaped sweep). */
  token?: string;
  /** Its process group, once its command runs. */
  group?: number;
  /**
   * A new claim of it that came while its end was being recorded: started
   * once that end is recorded as re-staged (a retry, claimed at once by
   * this worker), else let go (see Executor.adopt).
   */
  claimedAgain?: ClaimedRun;
  /** What it used, in all, once its process is gone (see usage/). */
  usage?: RunUsage | undefined;
  /** Disarms its time limit (see time-limit-watch.ts) when it ends. */
  disarmLimit?: () => void;
}

/** A run just claimed (or handed back), before anything was done with it. */
export function activeRun(claim: ClaimedRun): ActiveRun {
  return { ...claim, phase: 'starting' };
}
