/**
 * `fitq restart`: stages ended runs again, each a fresh attempt with the same
 * id, command, demands and labels, at its original place in the order (its
 * seq and priority are kept, so it goes ahead of runs staged after it, as a
 * retry does); the attempt that ended goes to the run's history of attempts
 * (see restartRuns-*.lua). With `cascade`, the dependents canceled because
 * of it are restarted too.
 */
import { RESTART_CHUNK } from './chunks.js';
import type { QueueContext } from './context.js';
import { resolveRunIds } from './ids.js';
import { requestSigner } from './requests.js';
import { refusedRequestMessage } from '../security/request-signature.js';

export interface RestartResult {
  id: string;
  /** restarted: staged again (`where`); refused: not ended (`status`); notYours: another user's signed run; removed: gone meanwhile. */
  outcome: 'restarted' | 'refused' | 'notYours' | 'removed';
  /** Restarted by --cascade, as a dependent of a restarted run. */
  cascade?: boolean;
  /** Where a restarted run went: staged, delayed, held, deps, canceled (its own dependencies can never be met). */
  where?: string;
  status?: string;
  message: string;
}

const WHERE: Readonly<Record<string, string>> = {
  staged: 'staged',
  delayed: 'staged, waiting for its begin time',
  deps: 'staged, waiting for its dependencies',
  held: 'held',
  canceled: 'canceled again: its dependencies can never be met',
};

/**
 * Restarts the runs named, RESTART_CHUNK per script call; with `cascade`,
 * the dependents a call's cascade did not reach (its limit per call) are
 * restarted by the next calls, as the cascade would have.
 */
export async function restartRuns(ctx: QueueContext, refs: readonly string[], cascade: boolean): Promise<RestartResult[]> {
  const ids = [...new Set(await resolveRunIds(ctx, refs))];
  const results: RestartResult[] = [];
  const reported = new Set<string>();
  // Runs the cascade reached but left to a later call.
  const left: string[] = [];
  const requests = await requestSigner(ctx, 'restart');
  for (let i = 0; i < ids.length || left.length > 0; ) {
    const fromCascade = i >= ids.length;
    const chunk = fromCascade ? left.splice(0, RESTART_CHUNK) : ids.slice(i, i + RESTART_CHUNK);
    if (!fromCascade) i += RESTART_CHUNK;
    const outcomes = await ctx.scripts.restartRuns(chunk.map((id) => [id, requests.of(id)] as const), cascade);
    const named = new Set(chunk);
    for (const { runId: id, outcome, detail } of outcomes) {
      const byCascade = fromCascade || !named.has(id) || reported.has(id);
      // A run left by one call and restarted by a later one's cascade meanwhile: reported once.
      if (fromCascade && outcome !== 'restarted' && outcome !== 'cascadeLeft' && outcome !== 'notYours') continue;
      if (outcome === 'cascadeLeft') {
        left.push(id);
        continue;
      }
      reported.add(id);
      if (outcome === 'restarted') {
        results.push({ id, outcome, where: detail, ...(byCascade ? { cascade: true } : {}), message: `Run ${id} restarted${byCascade ? ' (cascade)' : ''}: ${WHERE[detail] ?? detail}` });
      } else if (outcome === 'notYours') {
        results.push({ id, outcome, ...(byCascade ? { cascade: true } : {}), message: `Run ${id} not restarted${byCascade ? ' (cascade)' : ''}: ${refusedRequestMessage('restart', id, detail, requests.requester)}` });
      } else if (outcome === 'notEnded') {
        results.push({ id, outcome: 'refused', status: detail, message: `Run ${id} is ${detail}: only an ended run can be restarted` });
      } else {
        results.push({ id, outcome: 'removed', message: `Run ${id} was removed meanwhile` });
      }
    }
  }
  return results;
}
