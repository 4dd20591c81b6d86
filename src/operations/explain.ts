/**
 * Why staged runs wait, as verdicts (model/explain.ts): what every live
 * worker's next claim would do with each, judged by the claim's own policy
 * (explainRuns-*.lua, EXPLAIN_CHUNK runs a call). For `fitq top` and the
 * agents' why_waiting, which show more than the one line a listing gives.
 * Reads only.
 */
import type { RunVerdict } from '../model/explain.js';
import type { QueueContext } from './context.js';
import { EXPLAIN_CHUNK } from './run-pages.js';

/** Each staged run's verdict; a run that is not in the fit index (not staged, parked, unknown) has none. */
export async function explainWaits(ctx: QueueContext, runIds: readonly string[]): Promise<Map<string, RunVerdict>> {
  const verdicts = new Map<string, RunVerdict>();
  for (let i = 0; i < runIds.length; i += EXPLAIN_CHUNK) {
    const ids = runIds.slice(i, i + EXPLAIN_CHUNK);
    (await ctx.scripts.explainRuns(ids)).forEach((verdict, j) => {
      if (verdict) verdicts.set(ids[j]!, verdict);
    });
  }
  return verdicts;
}
