/**
 * Cheap reads for an overview of a namespace (the dashboard's): each run's
 * status and times only, not whole records, and the staged runs per demand
 * shape straight from the fit index. Read only: no reap, no reconcile; a
 * run upkeep has yet to catch up with counts as a read shows it
 * (model/upkeep-view.ts), as on the runs page.
 */
import { RUN_STATUSES, type RunStatus } from '../model/run-record.js';
import { describeShape, type RunSummary, type StagedShape } from '../model/run-summary.js';
import { isEnded, type RunRecord } from '../model/run-record.js';
import { execPipeline } from '../redis/pipeline.js';
import type { ReadContext } from './context.js';
import { readRuns } from './read.js';
import { readWorkers } from './workers.js';

/** Runs read per round trip. */
const CHUNK = 1000;

/**
 * Every run of the namespace, as status and times (a run removed meanwhile
 * is left out). Runs upkeep may have yet to catch up with (running on a
 * worker whose lease ran out, ended without BullMQ's `finishedOn`) are read
 * whole, to count as a read shows them.
 */
export async function readRunSummaries(ctx: ReadContext): Promise<RunSummary[]> {
  const { redis, keys } = ctx;
  const ids = await redis.zrange(keys.ids, 0, -1);
  const lapsed = new Set((await readWorkers(ctx)).filter((worker) => worker.liveness.leaseLeftMs < 0).map((worker) => worker.name));
  const summaries = new Map<string, RunSummary>();
  const unsettled: string[] = [];
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const pipeline = redis.pipeline();
    for (const id of chunk) pipeline.hmget(keys.run(id), 'status', 'held', 'timestamp', 'processedOn', 'finishedOn', 'worker');
    (await execPipeline(pipeline, { wrongTypeAsNull: true })).forEach((reply, j) => {
      const [status, held, stagedAt, startedAt, finishedAt, worker] = (reply ?? []) as (string | null)[];
      if (!status || !(RUN_STATUSES as readonly string[]).includes(status)) return;
      if ((status === 'running' && lapsed.has(worker ?? '')) || (isEnded({ status } as RunRecord) && !finishedAt)) unsettled.push(chunk[j]!);
      summaries.set(chunk[j]!, {
        // As parseRunFields has it: a held run is stored as staged with `held` set.
        status: status === 'staged' && held === '1' ? 'held' : (status as RunStatus),
        stagedAt: Number(stagedAt ?? 0),
        ...(startedAt ? { startedAt: Number(startedAt) } : {}),
        ...(finishedAt ? { endedAt: Number(finishedAt) } : {}),
      });
    });
  }
  for (const run of await readRuns(ctx, unsettled)) summaries.set(run.id, summaryOf(run));
  return [...summaries.values()];
}

function summaryOf(run: RunRecord): RunSummary {
  return {
    status: run.status,
    stagedAt: run.stagedAt,
    ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
    ...(run.endedAt === undefined ? {} : { endedAt: run.endedAt }),
  };
}

/** The fit index's shapes with their number of staged runs, most runs first. */
export async function readStagedShapes({ redis, keys }: ReadContext): Promise<StagedShape[]> {
  const groups = Object.keys(await redis.hgetall(keys.groups));
  if (groups.length === 0) return [];
  const shapesPipeline = redis.pipeline();
  for (const group of groups) shapesPipeline.zrange(keys.group(group), 0, -1);
  const shapes = (await execPipeline(shapesPipeline, { wrongTypeAsNull: true })).flatMap((reply) => (reply ?? []) as string[]);
  if (shapes.length === 0) return [];
  const countPipeline = redis.pipeline();
  for (const shape of shapes) countPipeline.zcard(keys.staged(shape)).zrange(keys.staged(shape), 0, 0);
  const replies = await execPipeline(countPipeline, { wrongTypeAsNull: true });
  return shapes
    .map((shape, i) => {
      const head = ((replies[2 * i + 1] ?? []) as string[])[0];
      return { ...describeShape(shape), count: Number(replies[2 * i] ?? 0), ...(head === undefined ? {} : { head }) };
    })
    .filter((shape) => shape.count > 0)
    .sort((a, b) => b.count - a.count || a.shape.localeCompare(b.shape));
}
