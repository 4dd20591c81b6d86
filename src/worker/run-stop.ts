/**
 * Why the worker is stopping a run before its process ended on its own, as
 * one value per run: asked with requestStop, read when its end is recorded
 * (run-ending.ts decides what that stop makes of the process's outcome).
 *
 * Several may come, in any order (a cancel during the grace after a time
 * limit, a worker stopped while a run is canceled...). The first one asked
 * holds, except that a later one of a higher rank takes its place:
 *
 *   cancel  >  abandon = worker-stop = preempt  >  timeout
 *
 * So a cancel wins over everything (a run canceled while its worker stops,
 * or past its time limit, ends canceled); a run given up by its worker ends
 * stopped even when its time limit had run out first; between two give-ups
 * the first reason is kept. A time-out never replaces anything (the time
 * limit does not fire on a run already stopping, see time-limit-watch.ts).
 */

/**
 * - `cancel`: someone canceled it (it ends `canceled`).
 * - `worker-stop`: its worker is stopping now (a second interrupt, `fitq
 *   stop --now`, a fatal error): it ends `stopped`, re-staged or lost.
 * - `abandon`: the worker gave it up for anything else (its registration or
 *   its claim was lost, it could not run it): it ends `stopped` likewise.
 * - `preempt`: a claim preempted it for a run of a higher priority (its
 *   checkpoint signal, its grace, then its stop): it goes back to staged at
 *   its place, no retry spent, whatever its process did meanwhile.
 * - `timeout`: it ran past its time limit (it ends `timeout`).
 */
export type StopCause = 'cancel' | 'abandon' | 'timeout' | 'worker-stop' | 'preempt';

export interface RunStop {
  readonly cause: StopCause;
  /** What is recorded: alone for a run given up, before what its process did for a cancel or a time-out. */
  readonly reason: string;
}

/** A cancel: it ends `canceled (killed by signal SIGTERM)`. */
export const CANCELED: RunStop = { cause: 'cancel', reason: 'canceled' };

/** Higher takes the place of lower; between equals the first stays. */
const RANK: Record<StopCause, number> = { timeout: 0, abandon: 1, 'worker-stop': 1, preempt: 1, cancel: 2 };

/** Asks `run` to stop for `stop`: kept unless it already has a stop of the same or a higher rank. */
export function requestStop(run: { stop?: RunStop | undefined }, stop: RunStop): void {
  if (run.stop === undefined || RANK[stop.cause] > RANK[run.stop.cause]) run.stop = stop;
}

/** Whether the worker gave the run up (it ends `stopped`: re-staged, or lost), rather than ending it for the run's own sake. */
export function isGivenUp(stop: RunStop | undefined): boolean {
  return stop?.cause === 'abandon' || stop?.cause === 'worker-stop';
}
