/**
 * A run's time limit on this worker: which limit applies (its own, else the
 * worker's default, else its maximum), and the timers that enforce it,
 * measured from the run's start: its time signal ahead of the limit (if
 * asked), and at the limit the signal (SIGTERM, or the time signal when it
 * is asked at the limit) with SIGKILL after the worker's grace.
 */
import { formatTimeLimit, parseTimeSignal, type TimeSignal } from '../units/duration.js';
import type { ClaimedRun } from '../model/claimed-run.js';
import type { ClaimLimits } from '../queue/claim-reply.js';

export interface RunTimeLimit {
  limitMs: number;
  /** The signal at the limit, or ahead of it. */
  signal: NodeJS.Signals;
  /** How long before the limit `signal` comes (0: at the limit). */
  beforeMs: number;
}

/** The limit a claimed run gets here, from its own (signed) limit and signal and the worker's limits; undefined for none. */
export function runTimeLimit(claim: Pick<ClaimedRun, 'stagedTimeLimit' | 'run'>, limits: ClaimLimits): RunTimeLimit | undefined {
  let limitMs = claim.stagedTimeLimit ?? limits.defaultMs ?? limits.maxMs;
  if (limitMs === undefined) return undefined;
  // The claim never takes a run over the maximum; a run altered by hand is held to it all the same.
  if (limits.maxMs !== undefined) limitMs = Math.min(limitMs, limits.maxMs);
  let timeSignal: TimeSignal = { signal: 'SIGTERM', beforeMs: 0 };
  try {
    if (claim.run.timeSignal) timeSignal = parseTimeSignal('timeSignal', claim.run.timeSignal);
  } catch {
    // Not as fitq writes it (the stage refused it): SIGTERM at the limit.
  }
  return { limitMs, signal: timeSignal.signal as NodeJS.Signals, beforeMs: Math.min(timeSignal.beforeMs, limitMs) };
}

/** Longest delay one Node timer takes (about 24.8 days): longer ones are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fn` after `ms` (any length); returns what cancels it. */
function after(ms: number, fn: () => void): () => void {
  let timer: NodeJS.Timeout;
  const deadline = performance.now() + ms;
  const arm = (left: number) => {
    timer = setTimeout(() => {
      const rest = deadline - performance.now();
      if (rest > 1) arm(rest);
      else fn();
    }, Math.min(Math.max(left, 0), MAX_TIMER_MS));
    timer.unref();
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/**
 * Arms a run's time limit from now (its start): `signal` gets the time
 * signal ahead of the limit, if asked; `expire` gets the reason to record
 * (`time limit of 2h30m reached`) and the signal to terminate with. Returns
 * what disarms it.
 */
export function armTimeLimit(
  limit: RunTimeLimit,
  on: { signal: (signal: NodeJS.Signals) => void; expire: (reason: string, signal: NodeJS.Signals) => void },
): () => void {
  const cancels: (() => void)[] = [];
  if (limit.beforeMs > 0) cancels.push(after(limit.limitMs - limit.beforeMs, () => on.signal(limit.signal)));
  const atLimit = limit.beforeMs > 0 ? 'SIGTERM' : limit.signal;
  cancels.push(after(limit.limitMs, () => on.expire(`time limit of ${formatTimeLimit(limit.limitMs)} reached`, atLimit)));
  return () => cancels.forEach((cancel) => cancel());
}
