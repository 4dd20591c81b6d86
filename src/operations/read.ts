/**
 * Reading runs: one (getRun, `fitq runs show`), every run or those a filter
 * selects (listRuns, `fitq runs`), or those references and a filter name
 * (selectRunIds, selectRunRecords: what cancel, rm, update... act on).
 * Every read only reads: reaping dead workers and catching up with
 * BullMQ's API is the upkeep of workers and of the commands that change
 * state (upkeep.ts). Listing and showing show a run that upkeep has not
 * caught up with as the upkeep will leave it (model/upkeep-view.ts), and
 * say why each staged run waits; readRuns shows runs so without judging
 * why they wait, getRuns gives them as stored.
 */
import { decodeRunUsage } from '../model/run-usage.js';
import type { RedisConnection } from '../redis/connection.js';
import { dependentsOf } from '../model/dependencies.js';
import type { RunVerdict } from '../model/explain.js';
import { validateRunId } from '../model/names.js';
import { dependencyArrays, parkedReason } from '../model/parked.js';
import { runFields } from '../model/run-data.js';
import { decodeRun } from '../model/run-decode.js';
import { matchesFilter, type RunAttempt, type RunFilter, type RunRecord } from '../model/run-record.js';
import { asUpkeepLeavesIt } from '../model/upkeep-view.js';
import { whyWaiting } from '../model/why-waiting.js';
import { execPipeline } from '../redis/pipeline.js';
import type { Resources } from '../resources/spec.js';
import { readArrayTallies } from './array-tallies.js';
import type { QueueContext, ReadContext } from './context.js';
import { resolveArrayId, resolveRunIds } from './ids.js';
import { unknownRun } from './run-errors.js';
import { readWorkers } from './workers.js';

/** A run with its exact demands (the record's are numbers, for JSON). */
export interface StoredRun {
  run: RunRecord;
  demands: Resources;
  /** Its flat record (runFields), as stored: what upkeep-view.ts judges a read's view by. */
  fields: Readonly<Record<string, string>>;
}

/** Reads of every run before one whose number of ids did not change meanwhile is taken as it is (getAllRuns). */
const ALL_RUNS_ATTEMPTS = 10;
/** Run ids read per ZRANGE of `ids` (one of 100,000 held RedisConnection 50 ms). */
const ID_CHUNK = 5000;

/** A key of another type (written by hand) reads as holding nothing; any other error stands. */
function wrongTypeAsZero(error: unknown): 0 {
  if (error instanceof Error && error.message.startsWith('WRONGTYPE')) return 0;
  throw error;
}

/**
 * Runs in staging order, optionally only some statuses, labels or an
 * array (its id, or a unique prefix of one), each as a read shows it
 * (upkeep-view.ts: a run of a worker whose lease ran out as the reaper will
 * settle it); staged runs carry why they wait, running runs whose worker is
 * not responding say so. Reads only.
 */
export async function listRuns(ctx: QueueContext, filter: RunFilter = {}): Promise<RunRecord[]> {
  if (filter.array !== undefined) filter = { ...filter, array: await resolveArrayId(ctx, filter.array) };
  const workers = await readWorkers(ctx);
  const all = (await selectRuns(ctx, {})).map(({ run, fields }) => asUpkeepLeavesIt(run, fields, workers));
  // Who waits for whom, from every run (a filter may leave out either side).
  const dependents = dependentsOf(all);
  const statuses = new Map(all.map((run) => [run.id, run.status as string]));
  const runs = all.filter((run) => matchesFilter(run, filter)).map((run) => {
    const waiting = dependents.get(run.id);
    return waiting ? { ...run, dependents: waiting } : run;
  });
  const tallies = await readArrayTallies(ctx, runs.flatMap((run) => (run.waitingForDependencies ? dependencyArrays(run.after) : [])));
  // Parked runs (held, not begun, waiting for dependencies) say why; every other staged run is explained in one script call.
  const parked = new Map(runs.flatMap((run) => {
    const reason = run.status === 'staged' || run.status === 'held' ? parkedReason(run, (id) => statuses.get(id), (array) => tallies.get(array)) : undefined;
    return reason === undefined ? [] : [[run.id, reason] as const];
  }));
  const staged = runs.filter((run) => run.status === 'staged' && !parked.has(run.id)).map((run) => run.id);
  const verdicts = new Map(staged.length > 0 ? (await ctx.scripts.explainRuns(staged)).map((verdict, i) => [staged[i]!, verdict]) : []);
  return runs.map((run) => (parked.has(run.id) ? { ...run, reason: parked.get(run.id) } : withWaitReason(run, verdicts.get(run.id))));
}

/**
 * The runs that references name (full ids or unique prefixes, resolved
 * first: see resolveRunIds) and, with a filter, every run matching it; in
 * that order, each once.
 */
export async function selectRunIds(ctx: QueueContext, refs: readonly string[], filter?: RunFilter): Promise<string[]> {
  const named = await resolveRunIds(ctx, refs);
  const matching = filter ? (await selectRuns(ctx, filter)).map(({ run }) => run.id) : [];
  return [...new Set([...named, ...matching])];
}

/**
 * The runs that references name and, with a filter, every run matching
 * it, as records (named ones first, then the others in staging order;
 * each once). A filter's `array` may be a unique prefix of an array id.
 */
export async function selectRunRecords(ctx: QueueContext, refs: readonly string[], filter?: RunFilter): Promise<RunRecord[]> {
  const named = await resolveRunIds(ctx, refs);
  const resolved = filter?.array === undefined ? filter : { ...filter, array: await resolveArrayId(ctx, filter.array) };
  const matching = resolved ? await selectRuns(ctx, resolved) : [];
  const byId = new Map(matching.map(({ run }) => [run.id, run]));
  const missing = named.filter((id) => !byId.has(id));
  for (const { run } of await getRuns(ctx, missing)) byId.set(run.id, run);
  const ids = [...new Set([...named, ...matching.map(({ run }) => run.id)])];
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** Runs matching a filter, in staging order, with their exact demands. */
async function selectRuns(ctx: QueueContext, filter: RunFilter): Promise<StoredRun[]> {
  const runs = await getAllRuns(ctx);
  return runs.filter(({ run }) => matchesFilter(run, filter)).sort((a, b) => a.run.seq - b.run.seq);
}

/**
 * One run, as a read shows it (upkeep-view.ts), with its history; throws
 * UsageError for an unknown id. Reads only.
 */
export async function getRun(ctx: QueueContext, runId: string): Promise<RunRecord> {
  const { run: stored, fields } = await readRun(ctx, runId);
  const run = asUpkeepLeavesIt(await withHistory(ctx, stored), fields, stored.status === 'running' ? await readWorkers(ctx) : [], true);
  if (run.status === 'staged' || run.status === 'held') {
    const deps = [...new Set((run.after ?? []).flatMap((group) => group.ids))];
    const statuses = new Map((await getRuns(ctx, deps)).map(({ run: dep }) => [dep.id, dep.status as string]));
    const tallies = await readArrayTallies(ctx, dependencyArrays(run.after));
    const reason = parkedReason(run, (id) => statuses.get(id), (array) => tallies.get(array));
    if (reason !== undefined) return { ...run, reason };
  }
  if (run.status !== 'staged') return run;
  const [verdict] = await ctx.scripts.explainRuns([run.id]);
  return withWaitReason(run, verdict);
}

/** A run with the runs that wait for it (or for its whole array) and its earlier attempts, read in one round trip. */
async function withHistory(ctx: QueueContext, run: RunRecord): Promise<RunRecord> {
  const pipeline = ctx.redis.pipeline();
  pipeline.lrange(ctx.keys.runAttempts(run.id), 0, -1);
  // SMEMBERS each, not SUNION: the roles' ACL rules allow SMEMBERS (docs/security.md).
  pipeline.smembers(ctx.keys.dependents(run.id));
  if (run.array !== undefined) pipeline.smembers(ctx.keys.arrayDependents(run.array));
  const [attempts, ...dependentSets] = (await execPipeline(pipeline, { wrongTypeAsNull: true })) as [string[] | null, ...(string[] | null)[]];
  const dependents = [...new Set(dependentSets.flatMap((set) => set ?? []))];
  const parsed = (attempts ?? []).flatMap((text) => {
    try {
      // What it used, checked as the run's own is: a history written by hand shows none.
      const { usage, ...attempt } = JSON.parse(text) as Omit<RunAttempt, 'usage'> & { usage?: unknown };
      const measured = decodeRunUsage(usage);
      return [measured ? { ...attempt, usage: measured } : attempt];
    } catch {
      return [];
    }
  });
  return {
    ...run,
    ...(dependents.length > 0 ? { dependents: dependents.sort() } : {}),
    ...(parsed.length > 0 ? { attempts: parsed } : {}),
  };
}

/** One run as stored, read over `redis` (by default the context's; upkeep goes over the context's). */
export async function readRun(ctx: QueueContext, runId: string, redis: RedisConnection = ctx.redis): Promise<StoredRun> {
  validateRunId(runId);
  const hash = await redis.hgetall(ctx.keys.run(runId));
  // A run of a batch not committed (still in `batches`) is not there yet; a `batches` written by hand as another type holds none.
  if (!hash.status || (hash.batch !== undefined && (await redis.hexists(ctx.keys.batches, hash.batch).catch(wrongTypeAsZero)) === 1)) {
    throw unknownRun(runId);
  }
  const fields = runFields(runId, hash);
  return { ...decodeRun(fields), fields };
}

/**
 * Runs as a read shows them (upkeep-view.ts; no reason judged why a staged
 * run waits), in the order given, read over `redis` (by default the
 * context's); an id that is no run is left out.
 */
export async function readRuns(ctx: ReadContext, ids: readonly string[], redis: RedisConnection = ctx.redis): Promise<RunRecord[]> {
  const stored = await getRuns(ctx, ids, redis);
  const workers = stored.some(({ run }) => run.status === 'running') ? await readWorkers({ redis, keys: ctx.keys }) : [];
  return stored.map(({ run, fields }) => asUpkeepLeavesIt(run, fields, workers));
}

/**
 * Every run, in one consistent view: a batch whose commit fell between
 * reading the ids (in parts) and reading the runs showed in part (the ids
 * staged so far, no longer hidden), so the ids are read again while their
 * number changed meanwhile, up to ALL_RUNS_ATTEMPTS times: a stager adds
 * ids through every read while it stages, so a read that met the commit
 * after a few such reads needs one more (no MULTI: fitq's documented ACL
 * rules do not allow it).
 */
async function getAllRuns(ctx: QueueContext): Promise<StoredRun[]> {
  for (let attempt = 1; ; attempt++) {
    const ids = await allRunIds(ctx);
    const { runs, idCount } = await readStoredRuns(ctx, ids, ctx.redis);
    if (idCount === ids.length || attempt === ALL_RUNS_ATTEMPTS) return runs;
  }
}

/** Every run id, ID_CHUNK at a time, each read going on after the last id of the one before (stable as runs come and go). */
async function allRunIds(ctx: QueueContext): Promise<string[]> {
  const ids: string[] = [];
  for (let from = '-'; ; ) {
    const chunk = await ctx.redis.zrange(ctx.keys.ids, from, '+', 'BYLEX', 'LIMIT', 0, ID_CHUNK);
    ids.push(...chunk);
    if (chunk.length < ID_CHUNK) return ids;
    from = `(${chunk[chunk.length - 1]!}`;
  }
}

/** The runs of `ids` as stored, read over `redis` (by default the context's); an id that is no run is left out. */
export async function getRuns(ctx: ReadContext, ids: readonly string[], redis: RedisConnection = ctx.redis): Promise<StoredRun[]> {
  return (await readStoredRuns(ctx, ids, redis)).runs;
}

/** The runs of `ids` that exist and are committed, and how many ids the namespace had as they were read. */
async function readStoredRuns(ctx: ReadContext, ids: readonly string[], redis: RedisConnection): Promise<{ runs: StoredRun[]; idCount: number }> {
  const pipeline = redis.pipeline();
  pipeline.hgetall(ctx.keys.batches);
  for (const id of ids) pipeline.hgetall(ctx.keys.run(id));
  pipeline.zcard(ctx.keys.ids);
  // An id whose key holds no hash (written by hand) is no run; a `batches` of another type holds no batch.
  const [batchReply, ...replies] = await execPipeline(pipeline, { wrongTypeAsNull: true });
  const idCount = Number(replies.pop() ?? 0);
  // Runs of a batch not committed are not there yet (read with them, in one round trip).
  const open = new Set(Object.keys((batchReply ?? {}) as Record<string, string>));
  // (Data BullMQ rewrote, job.updateData, is not read: fitq reads its own copy, and reconciling puts BullMQ's back.)
  const runs = replies.flatMap((reply, i) => {
    const hash = (reply ?? {}) as Record<string, string>;
    if (!hash.status || (hash.batch !== undefined && open.has(hash.batch))) return [];
    const fields = runFields(ids[i]!, hash);
    return [{ ...decodeRun(fields), fields }];
  });
  return { runs, idCount };
}

/**
 * A staged run with why it waits (its verdict from explainRuns; none: it
 * is not in the fit index, e.g. only a read's view stages it again).
 */
function withWaitReason(run: RunRecord, verdict: RunVerdict | undefined): RunRecord {
  if (run.status !== 'staged' || !verdict) return run;
  return { ...run, reason: whyWaiting(verdict).reason };
}
