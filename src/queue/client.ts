/**
 * FitqClient: stage, inspect, cancel and remove runs of one namespace.
 */
import type { Redis } from 'ioredis';
import { TimeoutError, UsageError } from '../errors.js';
import { closeRedis, connectRedis, type ConnectionOptions } from './connection.js';
import { formatMicros } from '../resources/amount.js';
import { parseResourceSpecs } from '../resources/spec.js';
import { obliterateExecutorQueue } from './executor-queue.js';
import { poolResources, readPool, type PoolResource, type PoolState } from './pools.js';
import { DEFAULT_PREFIX, DEFAULT_QUEUE, namespaceKeys, type NamespaceKeys } from './keys.js';
import { DEFAULT_LOG_MAX_LINES, readLogEntries, waitLogEntries, type LogEntry } from './logs.js';
import { validateRunId, validateWorkerName } from './names.js';
import { isEnded, parseRunFields, runDemands, type RunRecord, type RunStatus } from './run-record.js';
import { parseStageReply, Scripts } from './scripts.js';
import { prepareRuns, shapeOf, type PreparedRun, type StageRequest } from './stage.js';
import { whyWaiting } from './why-waiting.js';
import { readWorkers, type WorkerRecord } from './worker-record.js';
import { secretKey, type Secret } from '../security/secret.js';
import { signRuns } from '../security/signing.js';

export interface ClientOptions extends ConnectionOptions {
  /** Namespace; default `FITQ_QUEUE` or "default". */
  queue?: string;
  /** Key prefix; default `FITQ_PREFIX` or "fitq". */
  prefix?: string;
  /** Lines of output kept per run; default 10,000. */
  logMaxLines?: number;
  /**
   * Shared secret (text or bytes): a client signs the runs it stages; a worker
   * refuses, as `rejected`, runs not signed with it. Never logged.
   */
  secret?: Secret;
}

export interface StageResult {
  runs: RunRecord[];
  /** One line per group of runs that no live worker could ever start. */
  warnings: string[];
}

/** Runs staged per script call; a larger batch goes as several calls in one MULTI. */
const STAGE_CHUNK = 2000;

export function resolveNamespace(options: ClientOptions): { queue: string; prefix: string } {
  return {
    // An empty --queue is a mistake (refused by validation); an empty variable counts as unset.
    queue: options.queue ?? (process.env.FITQ_QUEUE || DEFAULT_QUEUE),
    prefix: options.prefix ?? (process.env.FITQ_PREFIX || DEFAULT_PREFIX),
  };
}

export class FitqClient {
  readonly keys: NamespaceKeys;
  readonly logMaxLines: number;
  private readonly scripts: Scripts;

  private constructor(
    /** The command connection; fails fast when Redis is down. */
    readonly redis: Redis,
    private readonly options: ClientOptions,
  ) {
    const { queue, prefix } = resolveNamespace(options);
    this.keys = namespaceKeys(queue, prefix);
    this.logMaxLines = options.logMaxLines ?? DEFAULT_LOG_MAX_LINES;
    this.scripts = new Scripts(redis, this.keys, this.logMaxLines);
  }

  /** Connects to Redis; throws ConnectionError with one clear line when it cannot. */
  static async connect(options: ClientOptions = {}): Promise<FitqClient> {
    const { queue, prefix } = resolveNamespace(options);
    namespaceKeys(queue, prefix); // validate before connecting
    secretKey(options.secret);
    return new FitqClient(await connectRedis(options), options);
  }

  async close(): Promise<void> {
    await closeRedis(this.redis);
  }

  /**
   * Stages one request (possibly repeated) or several, all in one round trip.
   * Runs no live worker could ever start are staged anyway, with a warning.
   */
  async stage(requests: StageRequest | readonly StageRequest[]): Promise<StageResult> {
    const list = Array.isArray(requests) ? (requests as readonly StageRequest[]) : [requests as StageRequest];
    const runs = signRuns(list.flatMap((request) => prepareRuns(request)), this.keys.base, secretKey(this.options.secret));
    const ids = new Set<string>();
    for (const run of runs) {
      if (ids.has(run.id)) throw new UsageError(`run id '${run.id}' given twice`);
      ids.add(run.id);
    }
    const now = Date.now();
    const seqs = await this.storeRuns(runs, now);
    const records = runs.map((run, i) =>
      parseRunFields({
        ...run.fields,
        id: run.id,
        status: 'staged',
        seq: String(seqs[i]),
        priority: String(run.priority),
        stagedAt: String(now),
      }),
    );
    const warnings = this.stageWarnings(runs, await this.listWorkers(), await readPool(this.redis, this.keys));
    return { runs: records, warnings };
  }

  /** Stores runs in one round trip; returns each run's staging sequence number. */
  private async storeRuns(runs: PreparedRun[], now: number): Promise<number[]> {
    const scriptRuns = runs.map((run) => ({ id: run.id, shape: shapeOf(run.demands, run.gpus), priority: run.priority, fields: run.fields }));
    const chunks: (typeof scriptRuns)[] = [];
    for (let i = 0; i < scriptRuns.length; i += STAGE_CHUNK) chunks.push(scriptRuns.slice(i, i + STAGE_CHUNK));
    let replies: ({ firstSeq: number } | { taken: string } | undefined)[];
    if (chunks.length === 1) {
      replies = [await this.scripts.stageRuns(chunks[0]!, now)];
    } else {
      // Ids given by users are checked first, so a large batch is never half
      // staged; random ids are 48 bits.
      const exists = this.redis.pipeline();
      for (const run of scriptRuns) exists.exists(this.keys.run(run.id));
      const takenIndex = ((await exists.exec()) ?? []).findIndex(([, count]) => count === 1);
      if (takenIndex >= 0) throw new UsageError(`run id '${scriptRuns[takenIndex]?.id}' is already taken`);
      const multi = this.redis.multi();
      for (const chunk of chunks) await this.scripts.stageRuns(chunk, now, multi);
      replies = ((await multi.exec()) ?? []).map(([error, reply]) => {
        if (error) throw error;
        return parseStageReply(reply);
      });
    }
    return replies.flatMap((reply, chunk) => {
      if (reply && 'taken' in reply) throw new UsageError(`run id '${reply.taken}' is already taken`);
      return chunks[chunk]!.map((_, i) => (reply?.firstSeq ?? 0) + i);
    });
  }

  private stageWarnings(runs: PreparedRun[], workers: WorkerRecord[], pool: PoolState): string[] {
    const byShape = new Map<string, PreparedRun[]>();
    for (const run of runs) {
      const shape = shapeOf(run.demands, run.gpus);
      const group = byShape.get(shape);
      if (group) group.push(run);
      else byShape.set(shape, [run]);
    }
    const warnings: string[] = [];
    for (const group of byShape.values()) {
      const verdict = whyWaiting({ demands: group[0]!.demands, gpus: group[0]!.gpus }, workers, pool);
      if (verdict.runnable) continue;
      const which = group.length === 1 ? `run ${group[0]!.id}` : `${group.length} runs (${group[0]!.id}, ...)`;
      warnings.push(`${which} staged, but no live worker can run ${group.length === 1 ? 'it' : 'them'} yet: ${verdict.reason}`);
    }
    return warnings;
  }

  /**
   * Sets the capacity of cluster-wide pool resources, shared by every worker
   * of the namespace; e.g. `license=4`. Zero is allowed (nothing may take it).
   */
  async setPool(resources: string | readonly string[]): Promise<PoolResource[]> {
    const specs = typeof resources === 'string' ? [resources] : [...resources];
    const amounts = parseResourceSpecs(specs, { keepZero: true });
    if (amounts.size === 0) throw new UsageError('name the pool resources to set, e.g. license=4');
    await this.scripts.setPool('set', [...amounts].flatMap(([name, micros]) => [name, formatMicros(micros)]));
    return this.listPool();
  }

  /** Removes pool resources; runs holding some keep it until they end. */
  async removePool(names: readonly string[]): Promise<void> {
    if (names.length === 0) throw new UsageError('name the pool resources to remove');
    const missing = await this.scripts.setPool('remove', [...names]);
    if (missing !== undefined) throw new UsageError(`no pool resource named '${missing}'`);
  }

  /** The pool's resources with capacity and current use. */
  async listPool(): Promise<PoolResource[]> {
    return poolResources(await readPool(this.redis, this.keys));
  }

  /** Live workers with capacity, usage and runs, after reaping any whose lease expired. */
  async listWorkers(): Promise<WorkerRecord[]> {
    const { reaped } = await this.scripts.reapWorkers();
    for (const { executorQueue } of reaped) await obliterateExecutorQueue(this.redis, this.keys, executorQueue);
    return readWorkers(this.redis, this.keys);
  }

  /**
   * Asks live workers, on any machine, to stop: gracefully (their runs
   * finish) or `now` (their runs are terminated first). An unknown name is a
   * UsageError and nothing is asked of anyone. With `wait`, resolves once
   * they have all left.
   */
  async stopWorkers(names: readonly string[], options: { now?: boolean; wait?: boolean; timeoutMs?: number } = {}): Promise<void> {
    names.forEach(validateWorkerName);
    const live = new Set((await this.listWorkers()).map((worker) => worker.name));
    const unknown = names.filter((name) => !live.has(name));
    if (unknown.length > 0) throw new UsageError(`unknown worker '${unknown[0]}' (no live worker has that name)`);
    for (const name of names) await this.scripts.requestStop(name, options.now ? 'now' : 'graceful');
    if (!options.wait) return;
    let left: WorkerRecord[] = [];
    const gone = await this.waitForWorkers((workers) => {
      left = workers.filter((worker) => names.includes(worker.name));
      return left.length === 0;
    }, options.timeoutMs ?? 10 * 60_000);
    if (!gone) throw new TimeoutError(`worker '${left[0]?.name}' has not stopped yet`);
  }

  /**
   * Waits until `done` holds for the live workers: checked at once, whenever
   * a worker joins or leaves (pub/sub), and every second besides (a dead
   * worker leaves only once someone reaps it). Resolves false after
   * `timeoutMs`, or when `signal` aborts.
   */
  async waitForWorkers(done: (workers: WorkerRecord[]) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const subscriber = await connectRedis(this.options, true);
    let changed = false;
    let wake = () => {};
    subscriber.on('message', (_channel: string, message: string) => {
      if (/"type":"worker(Joined|Lost)"/.test(message)) {
        changed = true;
        wake();
      }
    });
    signal?.addEventListener('abort', () => wake(), { once: true });
    try {
      await subscriber.subscribe(this.keys.events);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        changed = false;
        if (signal?.aborted) return false;
        if (done(await this.listWorkers())) return true;
        const remaining = deadline - Date.now();
        if (remaining <= 0) return false;
        if (changed) continue; // something happened while we looked
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(1000, remaining));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      await closeRedis(subscriber);
    }
  }

  /** Runs in staging order, optionally only some statuses; staged runs carry why they wait. */
  async listRuns(filter: { statuses?: readonly RunStatus[] } = {}): Promise<RunRecord[]> {
    const workers = await this.listWorkers();
    const pool = await readPool(this.redis, this.keys);
    const ids = await this.redis.zrange(this.keys.runs, 0, -1);
    const runs = await this.getRuns(ids);
    const statuses = filter.statuses && filter.statuses.length > 0 ? new Set(filter.statuses) : undefined;
    return runs.filter((run) => !statuses || statuses.has(run.status)).map((run) => this.withWaitReason(run, workers, pool));
  }

  /** One run; throws UsageError for an unknown id. */
  async getRun(runId: string): Promise<RunRecord> {
    const run = await this.readRun(this.redis, runId);
    if (run.status !== 'staged') return run;
    return this.withWaitReason(run, await this.listWorkers(), await readPool(this.redis, this.keys));
  }

  /** One run as stored, read over the given connection. */
  private async readRun(redis: Redis, runId: string): Promise<RunRecord> {
    validateRunId(runId);
    const fields = await redis.hgetall(this.keys.run(runId));
    if (!fields.id) throw new UsageError(`unknown run '${runId}'`);
    return parseRunFields(fields);
  }

  private async getRuns(ids: readonly string[]): Promise<RunRecord[]> {
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.run(id));
    const replies = (await pipeline.exec()) ?? [];
    return replies
      .map(([, fields]) => fields as Record<string, string>)
      .filter((fields) => fields.id)
      .map(parseRunFields);
  }

  private withWaitReason(run: RunRecord, workers: WorkerRecord[], pool: PoolState): RunRecord {
    if (run.status !== 'staged') return run;
    const waiting = {
      id: run.id,
      demands: runDemands({ resources: run.requires }),
      gpus: run.pinnedGpus ?? [],
      order: { priority: run.priority, seq: run.seq },
    };
    return { ...run, reason: whyWaiting(waiting, workers, pool).reason };
  }

  /**
   * Cancels a run: a staged one at once; a running one is stopped by its
   * worker (SIGTERM to its process group, SIGKILL after a grace period).
   * With `wait`, resolves once the run has ended.
   */
  async cancelRun(runId: string, options: { wait?: boolean; timeoutMs?: number } = {}): Promise<RunRecord> {
    validateRunId(runId);
    const { outcome, status } = await this.scripts.cancelRun(runId, Date.now());
    if (outcome === 'unknown') throw new UsageError(`unknown run '${runId}'`);
    if (outcome === 'ended') throw new UsageError(`run '${runId}' already ended (${status})`);
    if (outcome === 'requested' && options.wait) await this.waitForEnd(runId, options.timeoutMs);
    return this.getRun(runId);
  }

  /**
   * Resolves when the run has ended. Waits on the log stream's end marker (no
   * polling); every few seconds it also reaps, so a run whose worker died
   * ends as lost once the lease runs out. Survives Redis restarts.
   */
  async waitForEnd(runId: string, timeoutMs = 60_000): Promise<RunRecord> {
    const deadline = Date.now() + timeoutMs;
    const follower = await connectRedis(this.options, true);
    // Reaps over the follower too, so waiting survives a Redis restart.
    const followerScripts = new Scripts(follower, this.keys, this.logMaxLines);
    try {
      for (;;) {
        const last = await follower.xrevrange(this.keys.runLog(runId), '+', '-', 'COUNT', 1);
        const run = await this.readRun(follower, runId);
        if (isEnded(run)) return run;
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new UsageError(`run '${runId}' did not end within ${Math.round(timeoutMs / 1000)} s`);
        const entries = await waitLogEntries(follower, this.keys, runId, last[0]?.[0] ?? '0', Math.min(remaining, 5000));
        if (entries.length === 0) await followerScripts.reapWorkers();
      }
    } finally {
      await closeRedis(follower);
    }
  }

  /**
   * Removes runs and their logs, all or nothing. A running run is refused
   * unless `force`, which cancels it and waits for it to end first.
   */
  async removeRuns(runIds: readonly string[], options: { force?: boolean } = {}): Promise<number> {
    runIds.forEach(validateRunId);
    if (options.force) {
      for (const run of await this.getRuns(runIds)) {
        if (run.status === 'running') await this.cancelRun(run.id, { wait: true });
      }
    }
    const result = await this.scripts.removeRuns([...new Set(runIds)]);
    if ('unknown' in result) throw new UsageError(`unknown run '${result.unknown}'`);
    if ('running' in result) throw new UsageError(`run '${result.running}' is running: cancel it first, or use --force`);
    return result.removed;
  }

  /** Reads a run's output from the start. */
  async readLog(runId: string): Promise<LogEntry[]> {
    await this.getRun(runId);
    const entries: LogEntry[] = [];
    for (let after = '0'; ; ) {
      const page = await readLogEntries(this.redis, this.keys, runId, after);
      entries.push(...page);
      if (page.length < 1000) return entries;
      after = page[page.length - 1]!.id;
    }
  }

  /**
   * Calls `onEntry` for each log entry of a run, from the start, until the run
   * ends (or `signal` aborts). Reconnects by itself if Redis restarts.
   */
  async followLog(runId: string, onEntry: (entry: LogEntry) => void, signal?: AbortSignal): Promise<RunRecord> {
    await this.getRun(runId);
    const follower = await connectRedis(this.options, true);
    // Aborting interrupts a blocked read at once.
    const followerId = await follower.client('ID');
    const onAbort = () => void this.redis.client('UNBLOCK', followerId).catch(() => {});
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let after = '0';
      while (!signal?.aborted) {
        const entries = await waitLogEntries(follower, this.keys, runId, after, 2000);
        for (const entry of entries) {
          onEntry(entry);
          after = entry.id;
          if (entry.kind === 'end') return this.readRun(follower, runId);
        }
        if (entries.length === 0) {
          const run = await this.readRun(follower, runId);
          if (isEnded(run)) return run;
        }
      }
      return await this.readRun(this.redis, runId);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await closeRedis(follower);
    }
  }

}
