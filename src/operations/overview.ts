/**
 * Cheap reads for an overview of a namespace (the dashboard's), each
 * bounded by what the overview shows, never by the runs kept: runs by
 * status from the queue's states' sizes (readRunCounts), the runs started
 * and ended in the last hour (readRecentRuns), and the staged runs per
 * demand shape straight from the fit index. Read only: no reap, no
 * reconcile; a running run upkeep has yet to catch up with counts as a read
 * shows it (model/upkeep-view.ts), as on the runs page.
 */
import { ENDED_STATUSES, RUN_STATUSES, type RunStatus } from '../model/run-record.js';
import { describeShape, type RunSummary, type StagedShape } from '../model/run-summary.js';
import type { RunRecord } from '../model/run-record.js';
import { execPipeline, wrongTypeAs } from '../redis/pipeline.js';
import type { ReadContext } from './context.js';
import { readRuns } from './read.js';

/** Runs of a state whose statuses are told apart by reading each (held or waiting for dependencies; ended otherwise than completed) at most. */
export const SPLIT_MOST = 1000;
/** Ended runs read at most for the last hour's activity: the most recent. */
export const RECENT_MOST = 2000;

/** Runs by status; statuses a state holds too many runs of to tell apart are counted together (`lumped`). */
export interface RunCounts {
  counts: Partial<Record<RunStatus, number>>;
  lumped: { name: 'parked' | 'ended-otherwise'; label: string; count: number }[];
  total: number;
}

/**
 * Runs by status from the sizes of the queue's states: staged (prioritized,
 * delayed, wait), running (active), completed; waiting-children (held, or
 * waiting for dependencies) and failed (every other end) are told apart by
 * each run's status while they hold at most SPLIT_MOST runs, else counted
 * together. Running runs are read (they are few: what the workers run) so
 * one whose worker's lease ran out counts as upkeep will leave it.
 */
export async function readRunCounts(ctx: ReadContext): Promise<RunCounts> {
  const { redis, keys } = ctx;
  const q = (state: string) => keys.queue.key(state);
  const pipeline = redis.pipeline();
  pipeline.zcard(q('prioritized')).zcard(q('delayed')).llen(q('wait')).zcard(q('waiting-children')).zcard(q('completed')).zcard(q('failed'));
  pipeline.lrange(q('active'), 0, -1);
  const replies = await execPipeline(pipeline, { wrongTypeAsNull: true });
  const [prioritized, delayed, wait, parked, completed, failed] = replies.slice(0, 6).map((reply) => Number(reply ?? 0)) as [number, number, number, number, number, number];
  const active = (replies[6] ?? []) as string[];
  const counts: Partial<Record<RunStatus, number>> = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0]));
  const add = (status: RunStatus, n = 1) => (counts[status] = (counts[status] ?? 0) + n);
  add('staged', prioritized + delayed + wait);
  add('completed', completed);
  for (const run of await readRuns(ctx, active)) add(run.status);
  const lumped: RunCounts['lumped'] = [];
  const split = async (state: string, size: number, lump: RunCounts['lumped'][number], statuses: RunStatus[], statusOf: (status: string, held: string | null) => RunStatus) => {
    if (size > SPLIT_MOST) {
      for (const status of statuses) delete counts[status];
      lumped.push(lump);
      return;
    }
    const ids = await redis.zrange(q(state), 0, SPLIT_MOST - 1).catch(wrongTypeAs<string[]>([]));
    const reads = redis.pipeline();
    for (const id of ids) reads.hmget(keys.run(id), 'status', 'held');
    for (const reply of await execPipeline(reads, { wrongTypeAsNull: true })) {
      const [status, held] = (reply ?? []) as (string | null)[];
      add(statusOf(status ?? '', held ?? null));
    }
  };
  // A held run is stored as staged with `held` set (parseRunFields); an unreadable one counts as its state says.
  // (Staged runs waiting for dependencies are counted with the held ones then: the staged count is of the others.)
  await split('waiting-children', parked, { name: 'parked', label: 'held or waiting for dependencies', count: parked }, ['held'], (_status, held) => (held === '1' ? 'held' : 'staged'));
  const otherwise = ENDED_STATUSES.filter((status) => status !== 'completed');
  await split('failed', failed, { name: 'ended-otherwise', label: otherwise.join(', '), count: failed }, otherwise, (status) =>
    (ENDED_STATUSES as readonly string[]).includes(status) && status !== 'completed' ? (status as RunStatus) : 'failed');
  const total = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0) + lumped.reduce((sum, lump) => sum + lump.count, 0);
  return { counts, lumped, total };
}

/**
 * The runs the last hour's activity is drawn from: those running now, and
 * the RECENT_MOST of completed and of the other ends that ended last since `since` (epoch ms), as status and
 * times. `complete`: no run that ended since was left out.
 */
export async function readRecentRuns(ctx: ReadContext, since: number): Promise<{ runs: RunSummary[]; complete: boolean }> {
  const { redis, keys } = ctx;
  const ended = (state: string) => redis.zrange(keys.queue.key(state), '+inf', since, 'BYSCORE', 'REV', 'LIMIT', 0, RECENT_MOST).catch(wrongTypeAs<string[]>([]));
  const [completed, failed, active] = await Promise.all([ended('completed'), ended('failed'), redis.lrange(keys.queue.key('active'), 0, -1).catch(wrongTypeAs<string[]>([]))]);
  const complete = completed.length < RECENT_MOST && failed.length < RECENT_MOST;
  const runs = await readRuns(ctx, [...active, ...completed, ...failed]);
  return { runs: runs.map(summaryOf), complete };
}

function summaryOf(run: RunRecord): RunSummary {
  return {
    status: run.status,
    stagedAt: run.stagedAt,
    ...(run.startedAt === undefined ? {} : { startedAt: run.startedAt }),
    ...(run.endedAt === undefined ? {} : { endedAt: run.endedAt }),
  };
}

/** Shapes the overview reads at most: the oldest (by their first run) of each group, then the oldest of those. */
export const SHAPES_MOST = 50;

/**
 * The fit index's shapes with their number of staged runs, most runs
 * first: at most SHAPES_MOST of them, those whose first run is oldest
 * (each group's shapes are sorted so: `group:<names>`), and how many shapes
 * there are in all.
 */
export async function readStagedShapes({ redis, keys }: ReadContext): Promise<StagedShape[] & { total?: number }> {
  const groups = Object.keys(await redis.hgetall(keys.groups));
  if (groups.length === 0) return [];
  const shapesPipeline = redis.pipeline();
  for (const group of groups) shapesPipeline.zrange(keys.group(group), 0, SHAPES_MOST - 1, 'WITHSCORES').zcard(keys.group(group));
  const replies = await execPipeline(shapesPipeline, { wrongTypeAsNull: true });
  const oldest: { shape: string; score: number }[] = [];
  let total = 0;
  for (let i = 0; i < groups.length; i++) {
    const flat = (replies[2 * i] ?? []) as string[];
    for (let j = 0; j + 1 < flat.length; j += 2) oldest.push({ shape: flat[j]!, score: Number(flat[j + 1]) });
    total += Number(replies[2 * i + 1] ?? 0);
  }
  const shapes = oldest.sort((a, b) => a.score - b.score).slice(0, SHAPES_MOST).map(({ shape }) => shape);
  if (shapes.length === 0) return [];
  const countPipeline = redis.pipeline();
  for (const shape of shapes) countPipeline.zcard(keys.staged(shape)).zrange(keys.staged(shape), 0, 0);
  const counted = await execPipeline(countPipeline, { wrongTypeAsNull: true });
  const read = shapes
    .map((shape, i) => {
      const head = ((counted[2 * i + 1] ?? []) as string[])[0];
      return { ...describeShape(shape), count: Number(counted[2 * i] ?? 0), ...(head === undefined ? {} : { head }) };
    })
    .filter((shape) => shape.count > 0)
    .sort((a, b) => b.count - a.count || a.shape.localeCompare(b.shape));
  return Object.assign(read, { total });
}
