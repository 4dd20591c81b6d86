/** What a worker's running runs have used so far, recorded in Redis at each heartbeat (recordUsage-*.lua). */
import { encodeRunUsage } from '../../model/run-usage.js';
import type { ActiveRun } from '../active-run.js';
import type { ExecutorContext } from '../executor-context.js';

/**
 * Records the usage so far of the runs of `runs` whose process runs, under
 * registration `token`; a failure is logged, and the next beat tries again.
 */
export async function recordRunningUsage(ctx: ExecutorContext, runs: ReadonlyMap<string, ActiveRun>, token: string): Promise<void> {
  const usages = [...ctx.usage.running()].flatMap(([runId, usage]) => {
    const run = runs.get(runId);
    return run?.phase === 'running' ? [{ runId, epoch: run.epoch, usage: encodeRunUsage(usage) }] : [];
  });
  if (usages.length === 0) return;
  await ctx.scripts.recordUsage(ctx.workerName, token, usages).catch((error: Error) => {
    ctx.logger.debug({ err: error }, `Could not record what runs use so far: ${error.message}`);
  });
}
