/**
 * What `fitq cancel`, `fitq update` and `fitq drain` print for each run or
 * worker they acted on (one line each); the dashboard shows the same lines
 * after its actions.
 */
import { workerState, type WorkerRecord } from '../model/worker-record.js';
import type { CancelResult } from '../operations/end.js';
import type { UpdateResult } from '../operations/update.js';

/** What happened to a run asked to cancel. */
export function describeCancel({ id, outcome, run, message }: CancelResult): string {
  if (outcome === 'notYours') return `Run ${id} not canceled: ${message}`;
  if (!run) return `Run ${id} was removed meanwhile`;
  if (outcome === 'ended') return `Run ${id} already ${run.status}`;
  if (outcome === 'requested' && run.status === 'running') return `Cancel requested for run ${id}`;
  return `Run ${id} ${run.status}`;
}

/** What changed in a run (or would), old -> new. */
export function describeUpdate({ id, outcome, changes }: UpdateResult, dryRun: boolean): string {
  if (outcome === 'unchanged') return `Run ${id} unchanged (already so)`;
  const what = changes.map(({ field, from, to }) => `${field} ${from} -> ${to}`).join('; ');
  return `Run ${id} ${dryRun ? 'would change' : 'updated'}: ${what}`;
}

/** What `fitq drain` (or `undrain`) says of one worker. */
export function drainLine({ worker, changed }: { worker: WorkerRecord; changed: boolean }, drained: boolean): string {
  if (!drained) return changed ? `Worker ${worker.name} undrained: it claims runs again` : `Worker ${worker.name} was not drained`;
  const already = changed ? '' : ' (already)';
  const state = workerState(worker);
  if (state === 'drained') return `Worker ${worker.name} drained${already}: it runs nothing and claims nothing more`;
  const runs = worker.runs.length;
  return `Worker ${worker.name} draining${already}: ${runs} run${runs === 1 ? '' : 's'} still running, it claims nothing more`;
}
