/**
 * Waiting for runs to end: many (`fitq wait`, `fitq stage --wait`,
 * FitqClient.waitForRuns), or one (waitForEnd, as a cancel or `runs rm
 * --force` waits). For many, one connection of its own blocks on the
 * queue's event stream (XREAD BLOCK on BullMQ's `runs:events`): only the
 * runs an event names are read again, so thousands of runs cost one
 * blocked read and a status read per run that moved. A slow safety re-read
 * of every run still waiting covers events trimmed away or missed across a
 * Redis restart (the connection reconnects by itself, and every run is
 * read again once it is back). A run whose worker died ends `lost` when someone reaps the
 * worker: the waiter reaps at the moment the next lease runs out, as the
 * server tells, so it never depends on another live process. A user that
 * may only read cannot reap: at that moment it reads the runs as a read
 * shows them (model/upkeep-view.ts: a dead worker's run lost), so its wait
 * ends all the same.
 */
import { TimeoutError } from '../errors.js';
import { validateRunId } from '../model/names.js';
import { serverTimeMs } from '../model/liveness.js';
import { isEnded, type RunRecord } from '../model/run-record.js';
import type { NamespaceKeys } from '../queue/keys.js';
import { type RedisConnection } from '../redis/connection.js';
import { closeRedis } from '../redis/open-connections.js';
import { nodeServing } from '../redis/nodes.js';
import { execPipeline } from '../redis/pipeline.js';
import type { QueueContext, ReadContext } from './context.js';
import { watchRun } from './follow-log.js';
import { resolveRunIds } from './ids.js';
import { lastEventId } from './log-reads.js';
import { readRuns } from './read.js';
import { RunRemovedError } from './run-errors.js';
import { reap } from './upkeep.js';

/** How often every run still waited for is read again, whatever the events said. */
export const SAFETY_READ_MS = 30_000;

/** Past the lease deadline the server gave, so the reap finds it lapsed. */
const LAPSE_MARGIN_MS = 5;

/**
 * How long waiting for a run to end (cancel, rm --force) takes at most by
 * default: a canceled run ends within its worker's kill grace, a dead
 * worker's within its lease, both usually well below this.
 */
export const WAIT_FOR_END_MS = 10 * 60_000;

/** Statuses read per round trip. */
const READ_CHUNK = 5000;

/** Events read per XREAD. */
const EVENT_COUNT = 1000;

/** BullMQ's events of a run that may end a wait: it ended (any ended status is `completed` or `failed`), or was removed. */
const END_EVENTS: ReadonlySet<string> = new Set(['completed', 'failed', 'removed']);

/** The wait gave up (`timeout`) or was interrupted (`aborted`) before every run ended. */
export class WaitIncompleteError extends TimeoutError {
  constructor(
    readonly why: 'timeout' | 'aborted',
    /** Every run waited for, in the order given, as it is now. */
    readonly runs: RunRecord[],
    /** The ids of those that had not ended. */
    readonly pending: string[],
    timeoutMs?: number,
  ) {
    const shown = pending.slice(0, 10).join(', ') + (pending.length > 10 ? ', …' : '');
    const what = `${pending.length} of ${runs.length} run${runs.length === 1 ? '' : 's'} had not ended: ${shown}`;
    super(why === 'timeout' ? `gave up waiting after ${formatSeconds(timeoutMs ?? 0)}: ${what}` : `interrupted: ${what}`);
  }
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

export interface WaitOptions {
  /** Give up after this many ms (WaitIncompleteError, `timeout`); default: never. */
  timeoutMs?: number | undefined;
  /** Stops waiting (WaitIncompleteError, `aborted`). */
  signal?: AbortSignal | undefined;
  /** Hears each run as soon as it is seen ended (in the order they end). */
  onEnd?: ((run: RunRecord) => void) | undefined;
}

/**
 * Resolves with the runs' records, in the order given (ids or unique
 * prefixes; an unknown one is a UsageError before anything is waited
 * for), once every one has ended: see waitRuns. A run whose worker died
 * ends as lost as soon as the lease runs out. Gives up after `timeoutMs`,
 * or when `signal` aborts, with a WaitIncompleteError holding every run
 * as it is then; a run removed before its end could be read is a
 * RunRemovedError. Survives Redis restarts.
 */
export async function waitForRuns(ctx: QueueContext, refs: readonly string[], options: WaitOptions = {}): Promise<RunRecord[]> {
  const ids = await resolveRunIds(ctx, refs);
  const waiter = await ctx.connect();
  try {
    return await waitRuns({
      redis: waiter.redis,
      keys: ctx.keys,
      unblock: (clientId) => nodeServing(ctx.redis, ctx.keys.base).client('UNBLOCK', clientId),
      reap: async () => {
        const msUntilNext = await reap(waiter);
        // Refused (a user that may only read) or out of memory: the waiter reads the runs as the lease runs out instead.
        if (msUntilNext !== undefined || !waiter.upkeep.refused) return { msUntilNext, reaped: msUntilNext !== undefined };
        return { msUntilNext: await msUntilNextLapse(waiter), reaped: false };
      },
      readRuns: (runIds) => readRuns(ctx, runIds, waiter.redis),
      removed: (id) => new RunRemovedError(id),
    }, ids, options);
  } finally {
    await closeRedis(waiter.redis);
  }
}

/**
 * Resolves when the run has ended (a run whose worker died ends as lost as
 * soon as the lease runs out). Survives Redis restarts.
 */
export async function waitForEnd(ctx: QueueContext, runId: string, timeoutMs = WAIT_FOR_END_MS): Promise<RunRecord> {
  validateRunId(runId);
  const last = await ctx.redis.xrevrange(ctx.keys.runLog(runId), '+', '-', 'COUNT', 1);
  return watchRun(ctx, runId, last[0]?.[0] ?? '0', () => {}, { timeoutMs, reap: true });
}

export interface WaitParts {
  /** A resilient connection of the waiter's own: XREAD BLOCK holds it. */
  redis: RedisConnection;
  keys: NamespaceKeys;
  /** Interrupts the blocked read (CLIENT UNBLOCK from another connection). */
  unblock: (clientId: number) => Promise<unknown>;
  /**
   * Reaps dead workers: ms until the next lease runs out, if any. `reaped`
   * false: it did not (it may not, or no lease is left to run out), so a
   * lease that ran out ended runs without an event: they are read again.
   */
  reap: () => Promise<{ msUntilNext: number | undefined; reaped: boolean }>;
  /** The records of runs as a read shows them (over `redis`); a run that is gone is left out. */
  readRuns: (ids: readonly string[]) => Promise<RunRecord[]>;
  /** The error for a run removed before its end could be read. */
  removed: (id: string) => Error;
}

/** Resolves with the runs' records, in the order given, once every one has ended. */
export async function waitRuns(parts: WaitParts, ids: readonly string[], options: WaitOptions = {}): Promise<RunRecord[]> {
  const { redis, keys } = parts;
  const { signal, timeoutMs, onEnd } = options;
  const order = [...new Set(ids)];
  const ended = new Map<string, RunRecord>();
  const pending = new Set(order);
  const deadline = timeoutMs === undefined ? Infinity : performance.now() + timeoutMs;
  // On a cluster, the node that serves the namespace, where the read blocks.
  const blockingNode = () => nodeServing(redis, parts.keys.base);
  let clientId = Number(await blockingNode().client('ID'));
  const onAbort = () => void parts.unblock(clientId).catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  // Back from a disconnection: events may have been missed, every run is read again (and the connection has a new id).
  let reconnected = false;
  const onReady = () => {
    reconnected = true;
    void blockingNode().client('ID').then((id) => (clientId = Number(id)), () => {});
  };
  redis.on('ready', onReady);
  const incomplete = async (why: 'timeout' | 'aborted') => {
    const current = new Map((await parts.readRuns([...pending])).map((run) => [run.id, run]));
    const runs = order.flatMap((id) => {
      const run = ended.get(id) ?? current.get(id);
      return run ? [run] : [];
    });
    return new WaitIncompleteError(why, runs, [...pending], timeoutMs);
  };
  try {
    // Taken before the runs are first read: any later event of theirs is after it.
    let eventsAfter = await lastEventId({ redis, keys });
    let dirty = new Set(order);
    let reapAt = 0;
    let safetyAt = performance.now() + SAFETY_READ_MS;
    for (;;) {
      if (signal?.aborted) throw await incomplete('aborted');
      let now = performance.now();
      if (now >= reapAt) {
        const { msUntilNext, reaped } = await parts.reap();
        reapAt = performance.now() + Math.min(msUntilNext === undefined ? SAFETY_READ_MS : msUntilNext + LAPSE_MARGIN_MS, SAFETY_READ_MS);
        if (!reaped) dirty = new Set(pending);
      }
      if (reconnected || now >= safetyAt) {
        reconnected = false;
        dirty = new Set(pending);
        safetyAt = now + SAFETY_READ_MS;
      }
      if (dirty.size > 0) {
        for (const run of await readEnded(parts, [...dirty].filter((id) => pending.has(id)))) {
          ended.set(run.id, run);
          pending.delete(run.id);
          onEnd?.(run);
        }
        dirty.clear();
      }
      if (pending.size === 0) return order.map((id) => ended.get(id)!);
      now = performance.now();
      if (now >= deadline) throw await incomplete('timeout');
      // BLOCK 0 would wait forever: at least 1 ms.
      const blockMs = Math.max(1, Math.ceil(Math.min(reapAt, safetyAt, deadline) - now));
      const reply = await redis.xread('COUNT', EVENT_COUNT, 'BLOCK', blockMs, 'STREAMS', keys.queue.key('events'), eventsAfter);
      for (const [, entries] of reply ?? []) {
        for (const [id, flat] of entries) {
          eventsAfter = id;
          const fields = new Map<string, string>();
          for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!);
          const jobId = fields.get('jobId');
          // Starting (active) or staged again (waiting) ends nothing: only ends and removals are read.
          if (jobId !== undefined && pending.has(jobId) && END_EVENTS.has(fields.get('event') ?? '')) dirty.add(jobId);
        }
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    redis.off('ready', onReady);
  }
}

/**
 * Of these runs, the ended ones' records: statuses first (cheap), records
 * only for those that ended, or that run on a worker whose lease ran out
 * (a read shows them as the reaper will leave them: lost, or staged again).
 */
async function readEnded(parts: WaitParts, ids: string[]): Promise<RunRecord[]> {
  const { redis, keys } = parts;
  const endedIds: string[] = [];
  const lapsed = await lapsedWorkers(parts);
  for (let i = 0; i < ids.length; i += READ_CHUNK) {
    const chunk = ids.slice(i, i + READ_CHUNK);
    const pipeline = redis.pipeline();
    for (const id of chunk) pipeline.hmget(keys.run(id), 'status', 'worker');
    const replies = await execPipeline(pipeline, { wrongTypeAsNull: true });
    replies.forEach((reply, j) => {
      const [status, worker] = (reply ?? []) as (string | null | undefined)[];
      if (status === null || status === undefined) throw parts.removed(chunk[j]!);
      if (isEnded({ status } as RunRecord) || (status === 'running' && lapsed.has(worker ?? ''))) endedIds.push(chunk[j]!);
    });
  }
  const records: RunRecord[] = [];
  for (let i = 0; i < endedIds.length; i += READ_CHUNK) {
    const chunk = endedIds.slice(i, i + READ_CHUNK);
    const runs = new Map((await parts.readRuns(chunk)).map((run) => [run.id, run]));
    for (const id of chunk) {
      const run = runs.get(id);
      if (!run) throw parts.removed(id);
      // Ended when its status was read; BullMQ's retry may have staged it again since: it goes on.
      if (isEnded(run)) records.push(run);
    }
  }
  return records;
}

/** The workers whose lease ran out by the server's clock, and ms until the next live one's runs out (none: undefined). Reads only. */
async function readLeases({ redis, keys }: ReadContext): Promise<{ lapsed: Set<string>; msUntilNext: number | undefined }> {
  const [time, entries] = (await execPipeline(redis.pipeline().time().zrange(keys.workers, 0, -1, 'WITHSCORES'))) as [[string, string], string[]];
  const now = serverTimeMs(time);
  const lapsed = new Set<string>();
  let next: number | undefined;
  for (let i = 0; i + 1 < entries.length; i += 2) {
    const deadline = Number(entries[i + 1]);
    if (deadline < now) lapsed.add(entries[i]!);
    else next = Math.min(next ?? Infinity, deadline - now);
  }
  return { lapsed, msUntilNext: next };
}

async function lapsedWorkers(context: ReadContext): Promise<Set<string>> {
  return (await readLeases(context)).lapsed;
}

async function msUntilNextLapse(context: ReadContext): Promise<number | undefined> {
  return (await readLeases(context)).msUntilNext;
}
