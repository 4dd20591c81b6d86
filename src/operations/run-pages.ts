/**
 * Reading runs a page at a time, in staging order, by the order index
 * (`order:<block>`, keys.ts): what `fitq runs` and the dashboard's runs page
 * list. Every Redis call is bounded by the page (at most PAGE_CHUNK runs
 * read per round trip, EXPLAIN_CHUNK explained per script call), never by
 * the runs of the namespace: a filter that matches few runs reads on, chunk
 * by chunk, until the page is full or the runs end. Reads only, but for
 * the one-off indexing of runs an older fitq staged (indexOlderRuns).
 */
import { orderBlock } from '../queue/keys.js';
import { dependencyArrays, parkedReason } from '../model/parked.js';
import { matchesFilter, type RunFilter, type RunRecord } from '../model/run-record.js';
import { asUpkeepLeavesIt } from '../model/upkeep-view.js';
import { whyWaiting } from '../model/why-waiting.js';
import type { RunVerdict } from '../model/explain.js';
import { execPipeline, wrongTypeAs } from '../redis/pipeline.js';
import { readArrayTallies } from './array-tallies.js';
import type { QueueContext } from './context.js';
import { resolveArrayId } from './ids.js';
import { getRuns } from './read.js';
import { runUpkeep } from './upkeep.js';
import { readWorkers } from './workers.js';
import type { WorkerRecord } from '../model/worker-record.js';

/** Runs read per round trip while a page fills. */
export const PAGE_CHUNK = 500;
/** Staged runs explained per explainRuns call. */
export const EXPLAIN_CHUNK = 50;
/** Run ids of an older fitq put in the order index per script call. */
const INDEX_CHUNK = 1000;

export interface RunPageQuery {
  /** Status, labels, array (its id or a unique prefix of one). */
  filter?: RunFilter;
  /** Any other condition a run must meet (the dashboard's worker and free text), on the run as a read shows it. */
  where?: (run: RunRecord) => boolean;
  /** Runs staged after this staging number (or, `backward`, before it); none: from the first (backward: the newest). */
  from?: number;
  /** Page from `from` towards older runs: the page is the newest `limit` before it. */
  backward?: boolean;
  /** Most runs on the page. */
  limit: number;
}

export interface RunPage {
  /** The runs, in staging order, as a read shows them, each staged one with why it waits. */
  runs: RunRecord[];
  /** Where the next page starts (the staging number of the last run looked at, in the page's direction); undefined: no run follows. */
  next?: number;
}

/** Position and id of a run in the order index. */
interface Ordered {
  id: string;
  seq: number;
}

/**
 * A page of runs: those matching the query, in staging order, from its
 * position on (or back), at most `limit`; runs that start, end or are
 * staged between pages move nothing (a run keeps its staging number), so
 * paging on from `next` lists every run once.
 */
export async function readRunPage(ctx: QueueContext, query: RunPageQuery): Promise<RunPage> {
  const filter = query.filter?.array === undefined ? query.filter : { ...query.filter, array: await resolveArrayId(ctx, query.filter.array) };
  // Selecting nothing, a page reads just its runs; selecting, whole chunks until the page is full.
  const selects = query.where !== undefined || (filter !== undefined && ((filter.statuses?.length ?? 0) > 0 || Object.keys(filter.labels ?? {}).length > 0 || filter.array !== undefined));
  await indexOlderRuns(ctx);
  const workers = await readWorkers(ctx);
  const found: RunRecord[] = [];
  let next: number | undefined;
  let position = query.from;
  scan: for (;;) {
    const chunk = await orderedChunk(ctx, position, query.backward === true, selects ? PAGE_CHUNK : Math.min(query.limit, PAGE_CHUNK));
    if (chunk.length === 0) break;
    const stored = new Map((await getRuns(ctx, chunk.map(({ id }) => id))).map((entry) => [entry.run.id, entry]));
    for (const [i, { id, seq }] of chunk.entries()) {
      position = seq;
      const entry = stored.get(id);
      if (!entry) continue;
      const run = asUpkeepLeavesIt(entry.run, entry.fields, workers);
      if ((filter && !matchesFilter(run, filter)) || (query.where && !query.where(run))) continue;
      found.push(run);
      if (found.length < query.limit) continue;
      // Full: a next page only if a run follows (in this chunk, or the index beyond it).
      const more = i < chunk.length - 1 || (await orderedChunk(ctx, seq, query.backward === true, 1)).length > 0;
      if (more) next = seq;
      break scan;
    }
  }
  if (query.backward) found.reverse();
  return { runs: await explainPage(ctx, found, workers), ...(next === undefined ? {} : { next }) };
}

/**
 * How many runs the order index holds after the staging number `from`
 * (or, `backward`, before it; none: all), runs of a batch not committed
 * yet included: one ZCOUNT per block, in one round trip.
 */
export async function countRuns(ctx: QueueContext, from?: number, backward = false): Promise<number> {
  const last = await lastBlock(ctx);
  const pipeline = ctx.redis.pipeline();
  for (let block = 0; block <= last; block++) {
    const [min, max] = from === undefined ? ['-inf', '+inf'] : backward ? ['-inf', `(${from}`] : [`(${from}`, '+inf'];
    pipeline.zcount(ctx.keys.order(block), min, max);
  }
  return (await execPipeline(pipeline, { wrongTypeAsNull: true })).reduce<number>((sum, count) => sum + Number(count ?? 0), 0);
}

/** The highest block of the order index a run may be in: that of the last staging number given. */
async function lastBlock(ctx: QueueContext): Promise<number> {
  const seq = Number((await ctx.redis.get(ctx.keys.seq).catch(wrongTypeAs(null))) ?? 0);
  return orderBlock(Number.isFinite(seq) && seq > 0 ? seq : 0);
}

/** The next `count` runs of the order index after `from` (backward: before it), crossing blocks as needed. */
async function orderedChunk(ctx: QueueContext, from: number | undefined, backward: boolean, count: number): Promise<Ordered[]> {
  const last = await lastBlock(ctx);
  const out: Ordered[] = [];
  let block = from === undefined ? (backward ? last : 0) : orderBlock(backward ? Math.max(0, from - 1) : from + 1);
  for (; block >= 0 && block <= last && out.length < count; block += backward ? -1 : 1) {
    const bound = from === undefined ? (backward ? '+inf' : '-inf') : `(${from}`;
    const key = ctx.keys.order(block);
    const reply = await (backward
      ? ctx.redis.zrange(key, bound, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, count - out.length, 'WITHSCORES')
      : ctx.redis.zrange(key, bound, '+inf', 'BYSCORE', 'LIMIT', 0, count - out.length, 'WITHSCORES')
    ).catch(wrongTypeAs<string[]>([]));
    for (let i = 0; i + 1 < reply.length; i += 2) out.push({ id: reply[i]!, seq: Number(reply[i + 1]) });
  }
  return out;
}

/**
 * Runs staged by an older fitq, before the order index, are put in it once
 * (bounded script calls, INDEX_CHUNK ids each) the first time a namespace
 * is listed, found by the index holding fewer runs than `ids`. Skipped
 * where upkeep is (Redis out of memory, a user that may only read): those
 * runs are not listed then.
 */
async function indexOlderRuns(ctx: QueueContext): Promise<void> {
  const [indexed, all] = await Promise.all([countRuns(ctx), ctx.redis.zcard(ctx.keys.ids).catch(wrongTypeAs(0))]);
  if (indexed >= all) return;
  let position = '';
  do {
    const reached = await runUpkeep(ctx, () => ctx.scripts.indexRunOrder(position, INDEX_CHUNK));
    if (reached === undefined) return;
    position = reached;
  } while (position !== '');
}

/**
 * A page's runs with what a listing shows beside each: the runs that wait
 * for it (from the sets the scripts keep, as `fitq runs show` reads them),
 * why a parked run waits (its dependencies read, an array's from its tally)
 * and why every other staged run waits (explainRuns, EXPLAIN_CHUNK a call).
 */
async function explainPage(ctx: QueueContext, runs: readonly RunRecord[], workers: readonly WorkerRecord[]): Promise<RunRecord[]> {
  if (runs.length === 0) return [];
  const pipeline = ctx.redis.pipeline();
  for (const run of runs) {
    // SMEMBERS each, not SUNION: the roles' ACL rules allow SMEMBERS (docs/security.md).
    pipeline.smembers(ctx.keys.dependents(run.id));
    if (run.array !== undefined) pipeline.smembers(ctx.keys.arrayDependents(run.array));
  }
  const sets = (await execPipeline(pipeline, { wrongTypeAsNull: true })) as (string[] | null)[];
  let at = 0;
  const withDependents = runs.map((run) => {
    const own = sets[at++] ?? [];
    const ofArray = run.array !== undefined ? (sets[at++] ?? []) : [];
    const dependents = [...new Set([...own, ...ofArray])].sort();
    return dependents.length > 0 ? { ...run, dependents } : run;
  });
  // What the runs waiting for dependencies wait for: those runs' statuses, arrays' tallies.
  const waiting = withDependents.filter((run) => run.waitingForDependencies);
  const deps = [...new Set(waiting.flatMap((run) => (run.after ?? []).flatMap((group) => group.ids)))];
  const depRuns = deps.length > 0 ? await getRuns(ctx, deps) : [];
  const statuses = new Map(depRuns.map(({ run, fields }) => [run.id, asUpkeepLeavesIt(run, fields, workers).status as string]));
  const tallies = await readArrayTallies(ctx, waiting.flatMap((run) => dependencyArrays(run.after)));
  const parked = new Map(withDependents.flatMap((run) => {
    const reason = run.status === 'staged' || run.status === 'held' ? parkedReason(run, (id) => statuses.get(id), (array) => tallies.get(array)) : undefined;
    return reason === undefined ? [] : [[run.id, reason] as const];
  }));
  const staged = withDependents.filter((run) => run.status === 'staged' && !parked.has(run.id)).map((run) => run.id);
  const verdicts = new Map<string, RunVerdict | undefined>();
  for (let i = 0; i < staged.length; i += EXPLAIN_CHUNK) {
    const ids = staged.slice(i, i + EXPLAIN_CHUNK);
    (await ctx.scripts.explainRuns(ids)).forEach((verdict, j) => verdicts.set(ids[j]!, verdict));
  }
  return withDependents.map((run) => {
    if (parked.has(run.id)) return { ...run, reason: parked.get(run.id) };
    const verdict = verdicts.get(run.id);
    return run.status === 'staged' && verdict ? { ...run, reason: whyWaiting(verdict).reason } : run;
  });
}
