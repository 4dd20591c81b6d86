/**
 * How a worker ends a run: which end it records (its process's own outcome,
 * a rejection, a cancellation, or a stop by its worker) and what it says in
 * its log about what was, or was not, recorded.
 */
import type { FinishInput, FinishResult } from '../queue/worker-calls.js';
import type { RunOutcome } from './child.js';
import { isGivenUp, type RunStop } from './run-stop.js';

/** How a run ended: as its process did, rejected before it could start, or returned (see RunOutcome). */
export type RunEnding = Omit<RunOutcome, 'status'> & { status: RunOutcome['status'] | 'rejected' };

/** What the executor knows of a run when it ends. */
export interface EndingRun {
  /** Why the worker stopped it (or never started it), if it did: see run-stop.ts. */
  stop?: RunStop | undefined;
  /** Whether it started: a run given up before it started never ran. */
  started: boolean;
  /** Whether the worker terminated its process before it exited. */
  terminated: boolean;
}

/** The reason recorded for runs a stopped worker ended: "its worker w1 was stopped (second interrupt)". */
export function stoppedReason(worker: string, why?: string): string {
  return `its worker ${worker} was stopped${why ? ` (${why})` : ''}`;
}

/**
 * The end to record: the one place where the run's stop and its process's
 * outcome make the status and reason recorded.
 *
 * - rejected (its signature did not hold): rejected, whatever else.
 * - canceled: `canceled`, "canceled (<what its process did>)", whether it
 *   exited first or not, started or not.
 * - returned (its worker lacked the means to start it): put back as staged,
 *   no retry spent.
 * - preempted (a claim preempted it): put back as staged at its place, no
 *   retry spent, whatever its process did after its checkpoint signal.
 * - given up by its worker (abandon, worker-stop), and terminated for it or
 *   never started: it did not fail: `stopped` with the stop's reason, which
 *   re-stages it or ends it lost.
 * - past its time limit and terminated for it: `timeout`, "<the limit>
 *   (<what its process did>)", whatever it then exited with.
 * - otherwise (no stop, or its process exited on its own first): its
 *   process's own outcome.
 */
export function endingToRecord(run: EndingRun, outcome: RunEnding): Pick<FinishInput, 'status' | 'reason'> {
  const { stop } = run;
  if (outcome.status === 'rejected') return { status: 'rejected', reason: outcome.reason };
  if (stop?.cause === 'cancel') return { status: 'canceled', reason: `${stop.reason} (${outcome.reason})` };
  if (outcome.status === 'returned') return { status: 'returned', reason: outcome.reason };
  if (stop?.cause === 'preempt') return { status: 'preempted', reason: stop.reason };
  if (stop !== undefined && isGivenUp(stop) && (!run.started || run.terminated)) return { status: 'stopped', reason: stop.reason };
  if (stop?.cause === 'timeout' && run.terminated) return { status: 'timeout', reason: `${stop.reason} (${outcome.reason})` };
  return { status: outcome.status, reason: outcome.reason };
}

function describeFailure(outcome: RunEnding): string {
  if (outcome.exitCode !== undefined) return `exit code ${outcome.exitCode}`;
  if (outcome.signal) return `signal ${outcome.signal}`;
  return outcome.reason;
}

/** What the run's process did, for a sentence: "exited 0", "was killed by signal SIGTERM". */
function describeProcess(run: EndingRun, outcome: RunEnding): string {
  if (outcome.status === 'rejected') return `was rejected (${outcome.reason})`;
  if (!run.started) return 'was not started';
  if (outcome.exitCode !== undefined) return `exited ${outcome.exitCode}`;
  if (outcome.signal) return `was killed by signal ${outcome.signal}`;
  return `did not start (${outcome.reason})`;
}

/** Why a result was not recorded. */
function whyNotRecorded(result: Exclude<FinishResult, { outcome: 'recorded' }> | Error): string {
  if (result instanceof Error) return result.message;
  if (result.outcome === 'fenced') {
    return 'this worker no longer holds its registration (its lease ran out, or Redis lost its data); the run ends when that registration is reaped';
  }
  return result.status ? `the run is no longer this claim's (it is ${result.status} now)` : 'the run no longer exists';
}

/** The worker's log line about a run's end, saying what was recorded, or that nothing was and why. */
export function endingMessage(
  runId: string,
  run: EndingRun,
  outcome: RunEnding,
  recorded: Pick<FinishInput, 'status' | 'reason'>,
  result: FinishResult | Error,
): { level: 'info' | 'warn'; message: string } {
  if (result instanceof Error || result.outcome !== 'recorded') {
    return { level: 'warn', message: `Run ${runId} ${describeProcess(run, outcome)} but its result was not recorded: ${whyNotRecorded(result)}` };
  }
  if (recorded.status === 'returned' && result.status === 'staged') {
    return { level: 'warn', message: `Run ${runId} could not be started: ${recorded.reason}: put back as staged` };
  }
  switch (result.status) {
    case 'completed':
      return { level: 'info', message: `Run ${runId} completed` };
    case 'canceled':
      return { level: 'info', message: `Run ${runId} canceled` };
    case 'timeout':
      return { level: 'info', message: `Run ${runId} timed out: ${recorded.reason}` };
    case 'rejected':
      return { level: 'warn', message: `Run ${runId} ${recorded.reason}` };
    case 'failed':
      return { level: 'info', message: `Run ${runId} failed (${describeFailure(outcome)})` };
    default: {
      const how = run.started ? `terminated (${describeFailure(outcome)})` : 'not started';
      return { level: 'info', message: `Run ${runId} ${how} as ${recorded.reason}: ${result.status === 'staged' ? 're-staged' : 'lost'}` };
    }
  }
}
