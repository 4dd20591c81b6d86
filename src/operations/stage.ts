/**
 * Staging (`fitq stage`): requests checked and expanded into runs at the
 * edge (model/stage.ts, model/sweep.ts), their dependencies resolved,
 * signed with the secret if there is one, then stored: in one script call,
 * or a larger batch in several, hidden from readers until committed (all
 * or nothing). Runs no live worker could ever start are staged anyway,
 * with a warning.
 */
import { confirmWrites } from '../redis/replica-wait.js';
import { randomBytes } from 'node:crypto';
import { UsageError } from '../errors.js';
import { runDataJson } from '../model/run-data.js';
import type { RunRecord } from '../model/run-record.js';
import { runShape, stagedRecord, type PreparedRun, type StageRequest } from '../model/stage.js';
import { prepareRequest } from '../model/sweep.js';
import type { StagedBatch } from '../queue/run-calls.js';
import { signRuns } from '../security/signing.js';
import { signRunsAsUser } from '../security/user-keys.js';
import type { QueueContext } from './context.js';
import { resolveDependencies } from './dependencies.js';
import { getRuns } from './read.js';
import { reap } from './upkeep.js';
import { stageWarnings } from './warnings.js';
import { STAGE_CHUNK } from './chunks.js';

/** How long a batch staged in chunks stays open after each chunk: a stager silent this long is taken as dead. */
const BATCH_TTL_MS = 60_000;

export interface StageResult {
  runs: RunRecord[];
  /** One line per group of runs that no live worker could ever start. */
  warnings: string[];
}

/**
 * Stages one request (possibly repeated) or several, all in one round trip.
 * Runs no live worker could ever start are staged anyway, with a warning.
 */
export async function stageRuns(ctx: QueueContext, requests: StageRequest | readonly StageRequest[]): Promise<StageResult> {
  const given = Array.isArray(requests) ? (requests as readonly StageRequest[]) : [requests as StageRequest];
  const list = await resolveDependencies(ctx, given);
  const stager: Record<string, string> = { user: ctx.stager.user, stagedFrom: ctx.stager.host };
  const prepared = list
    .flatMap(prepareRequest)
    .map((run) => ({ ...run, fields: { ...run.fields, ...stager } }));
  const runs = signRunsAsUser(signRuns(prepared, ctx.keys.base, ctx.secret), ctx.keys.base, ctx.userKey);
  const ids = new Set<string>();
  for (const run of runs) {
    if (ids.has(run.id)) throw new UsageError(`run id '${run.id}' given twice`);
    ids.add(run.id);
  }
  const stored = await storeRuns(ctx, runs);
  // Staged only once the replicas asked for have them (--redis-wait-replicas): a failover cannot lose them then.
  await confirmWrites(ctx.redis, ctx.keys.base, ctx.replicaWait, describeStaged(runs.map((run) => run.id)));
  const records = runs.map((run, i) => stagedRecord(run, stored[i]!.seq, stored[i]!.timestamp));
  // A run with dependencies may have ended at once (one can never be met): as stored.
  const parked = runs.filter((run) => run.fields.lifecycle !== undefined).map((run) => run.id);
  const asStored = new Map((await getRuns(ctx, parked)).map(({ run }) => [run.id, run]));
  await reap(ctx);
  const warnings = await stageWarnings(ctx, runs.filter((run) => asStored.get(run.id)?.status !== 'canceled'));
  return { runs: records.map((record) => asStored.get(record.id) ?? record), warnings };
}

/**
 * Stores runs: one script call, or for more than STAGE_CHUNK runs a hidden
 * batch of calls and its commit; returns each run's staging sequence number
 * and time (the Redis server's clock).
 */
async function storeRuns(ctx: QueueContext, runs: PreparedRun[]): Promise<{ seq: number; timestamp: number }[]> {
  const scriptRuns = runs.map((run) => ({
    id: run.id,
    shape: runShape(run),
    priority: run.priority,
    data: runDataJson(run.fields, run.priority),
    ...(run.array === undefined ? {} : { array: run.array, ...(run.limit === undefined ? {} : { limit: run.limit }) }),
  }));
  const chunks: (typeof scriptRuns)[] = [];
  for (let i = 0; i < scriptRuns.length; i += STAGE_CHUNK) chunks.push(scriptRuns.slice(i, i + STAGE_CHUNK));
  const replies: (StagedBatch | undefined)[] = [];
  if (chunks.length === 1) {
    replies.push(await ctx.scripts.stageRuns(chunks[0]!, undefined, undefined, ctx.stager));
  } else {
    // One script call per chunk, so Redis is never held long; the runs stay
    // hidden from fitq's readers until the commit, so a batch is all or
    // nothing to them. Given up, the chunks staged go again.
    const id = randomBytes(8).toString('hex');
    try {
      for (const [i, chunk] of chunks.entries()) {
        replies.push(await ctx.scripts.stageRuns(chunk, undefined, { id, ttlMs: BATCH_TTL_MS, first: i === 0, total: runs.length }, ctx.stager));
      }
      await ctx.scripts.commitBatch(id);
    } catch (error) {
      // (The failed chunk's too: its call may have run though its reply was lost.)
      await abortBatch(ctx, id, chunks.slice(0, replies.length + 1).flat().map((run) => run.id)).catch(() => {});
      throw error;
    }
    // Committed: the runs' `batch` field means nothing now, and costs bytes
    // in each. Left in place if this fails: the runs are staged all the same.
    await settleBatch(ctx, id, chunks).catch(() => {});
  }
  return replies.flatMap((batch, chunk) => chunks[chunk]!.map((_, i) => ({ seq: (batch?.firstSeq ?? 0) + i, timestamp: batch?.timestamp ?? 0 })));
}

/** Takes a committed batch's id out of its runs, a chunk per call. */
async function settleBatch(ctx: QueueContext, batch: string, chunks: readonly { id: string }[][]): Promise<void> {
  for (const chunk of chunks) await ctx.scripts.settleBatch(batch, chunk.map((run) => run.id));
}

/**
 * Removes the runs a stager staged of a batch it gives up, in bounded
 * calls, and ends the batch. (If this fails too, claims remove them once
 * the batch's deadline passed; readers never see them.)
 */
async function abortBatch(ctx: QueueContext, batch: string, runIds: string[]): Promise<void> {
  for (let i = 0; i < runIds.length; i += STAGE_CHUNK) {
    await ctx.scripts.abortBatch(batch, runIds.slice(i, i + STAGE_CHUNK), false);
  }
  await ctx.scripts.abortBatch(batch, [], true);
}

/** Runs staged, for a shortfall of replicas: their ids (the first few). */
function describeStaged(ids: readonly string[]): string {
  const shown = ids.slice(0, 5).join(', ');
  return `${ids.length === 1 ? 'run' : `${ids.length} runs`} ${shown}${ids.length > 5 ? ', …' : ''} staged`;
}
