/**
 * What a read shows of a run that upkeep has not caught up with yet,
 * judged from what Redis holds, without writing: reads never write
 * (workers reap and reconcile as they poll, and so do the commands that
 * change state). Each case is shown as the upkeep will leave it, so what a
 * read shows does not change when the upkeep comes by:
 * - a running run whose worker's lease ran out, as reaping settles it
 *   (includes/lifecycle/settleAbandonedRun.lua): `canceled` if a cancel was
 *   pending, `staged` again if it has retries left (as Slurm requeues a job
 *   of a failed node), else `lost`; with the reason the reaper writes;
 * - a running run whose worker has missed heartbeats but whose lease has
 *   not run out yet: running, saying its worker is not responding
 *   (liveness.ts, withWorkerLiveness);
 * - an ended run BullMQ retried (job.retry: its job no longer has a
 *   `finishedOn`): staged, as reconciling will stage it
 *   (includes/bullmq/followRetry.lua).
 */
import { withWorkerLiveness, type Liveness } from './liveness.js';
import { isEnded, type RunAttempt, type RunRecord } from './run-record.js';

/** A registered worker, as a read sees it (WorkerRecord has more). */
export interface WorkerSeen {
  name: string;
  /** Its last heartbeat, epoch ms by the server's clock. */
  heartbeatAt: number;
  liveness: Liveness;
}

/** Why the runs of a worker whose lease ran out end lost or are re-staged: as includes/workers/leaseLapsedReason.lua says it. */
export function leaseLapsedReason(worker: string): string {
  return `worker ${worker} stopped renewing its lease`;
}

/**
 * A run as a read shows it: as stored, unless upkeep has yet to catch up
 * with it (see above). `fields` is its flat record (run-data.ts, runFields:
 * `cancelRequested`, `finishedOn` are read); `workers` every registered
 * worker, lapsed or not; `history`: the run carries its earlier attempts
 * (getRun's), to which a re-staged run's lost attempt is added.
 */
export function asUpkeepLeavesIt(
  run: RunRecord,
  fields: Readonly<Record<string, string>>,
  workers: readonly WorkerSeen[],
  history = false,
): RunRecord {
  if (isEnded(run) && !fields.finishedOn) return asRetriedFromBullmq(run);
  if (run.status !== 'running') return run;
  const worker = workers.find((candidate) => candidate.name === run.worker);
  if (!worker) return run;
  if (worker.liveness.leaseLeftMs >= 0) return withWorkerLiveness(run, [worker]);
  return asReaped(run, fields.cancelRequested === '1', worker, history);
}

/** A running run of a worker whose lease ran out, as the reaper settles it (settleAbandonedRun, restageRun, endRun). */
function asReaped(run: RunRecord, cancelRequested: boolean, worker: WorkerSeen, history: boolean): RunRecord {
  const reason = leaseLapsedReason(worker.name);
  const now = worker.heartbeatAt + worker.liveness.heartbeatAgeMs;
  // Ended when it was last known alive (never before it started), as lastSeenAlive.lua has it.
  const endedAt = Math.max(Math.min(worker.heartbeatAt, now), run.startedAt ?? 0);
  const rest = without(run, 'workerResponding', 'deadline');
  if (cancelRequested) return { ...rest, status: 'canceled', reason: `canceled (${reason})`, endedAt };
  const restaged = run.restaged ?? 0;
  const retries = run.retries ?? 0;
  if (restaged >= retries) return { ...rest, status: 'lost', reason, endedAt };
  // Staged again: no longer on the worker, one attempt more in its history.
  const staged = without(rest, 'worker', 'devices', 'startedAt');
  const restagedReason = `${reason} (re-staged ${restaged + 1} of ${retries})`;
  const earlier = run.attempts ?? [];
  const attempts = history ? { attempts: [...earlier, lostAttempt(run, earlier, now, reason)] } : {};
  return { ...staged, status: 'staged', restaged: restaged + 1, restagedReason, reason: restagedReason, ...attempts };
}

/** The attempt the reaper records for a run it re-stages (recordAttempt.lua). */
function lostAttempt(run: RunRecord, earlier: readonly RunAttempt[], endedAt: number, reason: string): RunAttempt {
  return {
    attempt: earlier.length + 1,
    ...(run.worker === undefined ? {} : { worker: run.worker }),
    ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
    endedAt,
    status: 'lost',
    reason,
  };
}

/** An ended run BullMQ retried, as reconciling stages it again (followRetry.lua): its end, worker and reason gone. */
function asRetriedFromBullmq(run: RunRecord): RunRecord {
  const rest = without(run, 'endedAt', 'startedAt', 'exitCode', 'signal', 'worker', 'devices', 'restaged', 'restagedReason');
  return { ...rest, status: 'staged', reason: `retried from BullMQ (it was ${run.status})` };
}

/** A copy of a run without some of its optional fields. */
function without(run: RunRecord, ...keys: (keyof RunRecord)[]): RunRecord {
  const copy: Partial<RunRecord> = { ...run };
  for (const key of keys) delete copy[key];
  return copy as RunRecord;
}
