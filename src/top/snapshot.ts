/**
 * What `fitq top` shows, read in one go: the namespace's counts, its live
 * workers, the runs they run, the pool, and the staged runs by shape with
 * why the first of each waits. Reads only; every part comes from the same
 * operations the other views use.
 */
import type { FitqClient } from '../client.js';
import type { RunVerdict } from '../model/explain.js';
import type { RunRecord } from '../model/run-record.js';
import type { StagedShape } from '../model/run-summary.js';
import { whyWaiting } from '../model/why-waiting.js';
import type { WorkerRecord } from '../model/worker-record.js';
import { readRunCounts, readStagedShapes, type RunCounts } from '../operations/overview.js';
import type { PoolResource } from '../operations/pools.js';

export interface TopShape extends StagedShape {
  /** Why its first run waits, in fitq's words. */
  why?: string;
}

export interface TopSnapshot {
  /** When it was read (epoch ms). */
  at: number;
  paused: boolean;
  counts: RunCounts;
  workers: WorkerRecord[];
  /** What the workers run, the longest running first. */
  running: RunRecord[];
  pool: PoolResource[];
  /** Staged shapes, most runs first. */
  shapes: TopShape[];
  /** How many shapes there are in all (more than `shapes` holds when there are very many). */
  shapeTotal: number;
}

/** Heads explained per read: more shapes than a terminal shows are not judged. */
export const EXPLAINED_SHAPES = 20;

export async function readTopSnapshot(client: FitqClient): Promise<TopSnapshot> {
  const ctx = { redis: client.redis, keys: client.keys };
  const [paused, counts, workers, pool, shapes] = await Promise.all([
    client.isPaused(), readRunCounts(ctx), client.listWorkers(), client.listPool(), readStagedShapes(ctx),
  ]);
  const heads = shapes.slice(0, EXPLAINED_SHAPES).flatMap((shape) => (shape.head === undefined ? [] : [shape.head]));
  const [running, verdicts] = await Promise.all([
    client.readRuns(workers.flatMap((worker) => worker.runs)),
    client.explainWaits(heads),
  ]);
  return {
    at: Date.now(),
    paused,
    counts,
    workers,
    running: running.filter((run) => run.status === 'running').sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0)),
    pool,
    shapes: shapes.map((shape) => withWhy(shape, shape.head === undefined ? undefined : verdicts.get(shape.head))),
    shapeTotal: shapes.total ?? shapes.length,
  };
}

function withWhy(shape: StagedShape, verdict: RunVerdict | undefined): TopShape {
  return verdict === undefined ? shape : { ...shape, why: whyWaiting(verdict).reason };
}
