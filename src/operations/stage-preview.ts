/**
 * What a stage would do, without writing (fitq mcp's preview_stage): the
 * runs it would make (fitq's checks of every value, dependencies resolved),
 * the first of them as they would run (an array's placeholders filled in),
 * and per demand shape the verdict of every live worker's next claim, as
 * if they were staged now. What only the stage script judges (a staged
 * quota, an id already in use) is not previewed.
 */
import type { RunVerdict } from '../model/explain.js';
import type { RunRecord } from '../model/run-record.js';
import { runShape, stagedRecord, type PreparedRun, type StageRequest } from '../model/stage.js';
import { prepareRequest } from '../model/sweep.js';
import type { QueueContext } from './context.js';
import { resolveDependencies } from './dependencies.js';

/** Runs shown as they would be staged. */
export const PREVIEWED_RUNS = 20;

export interface StagePreview {
  /** How many runs it would stage. */
  count: number;
  /** The first PREVIEWED_RUNS of them, as a read would show them once staged. */
  runs: RunRecord[];
  /** Each demand shape: its runs, and what every live worker's next claim would do with one. */
  shapes: { runs: number; first: RunRecord; verdict: RunVerdict }[];
}

export async function previewStage(ctx: QueueContext, requests: readonly StageRequest[]): Promise<StagePreview> {
  const prepared = (await resolveDependencies(ctx, requests)).flatMap(prepareRequest);
  const byShape = new Map<string, PreparedRun[]>();
  for (const run of prepared) {
    const shape = runShape(run);
    byShape.set(shape, [...(byShape.get(shape) ?? []), run]);
  }
  const verdicts = await ctx.scripts.explainRuns([], [...byShape.keys()]);
  return {
    count: prepared.length,
    runs: prepared.slice(0, PREVIEWED_RUNS).map((run) => stagedRecord(run)),
    shapes: [...byShape.values()].map((runs, i) => ({ runs: runs.length, first: stagedRecord(runs[0]!), verdict: verdicts[i]! })),
  };
}
