/**
 * What `fitq cancel` and `fitq update` print for each run they acted on
 * (one line a run); the dashboard shows the same lines after its actions.
 */
import type { CancelResult } from '../client.js';
import type { UpdateResult } from '../operations/update.js';

/** What happened to a run asked to cancel. */
export function describeCancel({ id, outcome, run }: CancelResult): string {
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
