/**
 * FitqClient: stage, inspect, cancel and remove runs of one namespace.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { TimeoutError, UsageError } from '../errors.js';
import { closeRedis, connectRedis, isOutOfMemory, type ConnectionOptions } from '../redis/connection.js';
import { formatMicros } from '../resources/amount.js';
import { parseResourceSpecs, type Resources } from '../resources/spec.js';
import { listPool, type PoolResource } from '../operations/pools.js';
import { DEFAULT_PREFIX, DEFAULT_QUEUE, namespaceKeys, type NamespaceKeys } from './keys.js';
import { execPipeline } from '../redis/pipeline.js';
import { DEFAULT_LOG_MAX_LINES, type LogEntry } from '../model/logs.js';
import { lastEventId, readLogEntries, waitLogEntries } from '../operations/log-reads.js';
import { quote } from '../text/quote.js';
import { validateRunId, validateWorkerName } from '../model/names.js';
import { bullDataAltered, parseRunFields, runDataJson, runDemands, runFields } from '../model/run-data.js';
import { ENDED_STATUSES, isEnded, matchesFilter, type RunFilter, type RunRecord, type RunStatus } from '../model/run-record.js';
import { cleanableStatuses, readRetention, RETENTION_SETTINGS, storedLimit, validateLimit, type Retention, type RetentionSetting } from '../model/retention.js';
import { refusal, SCRIPT_CODES } from './script-codes.js';
import { Scripts, type ReconcileAction, type StagedBatch } from './scripts.js';
import { prepareRuns, runShape, type PreparedRun, type StageRequest } from '../model/stage.js';
import { updateRuns, type UpdateOptions, type UpdateResult } from './update.js';
import type { RunChanges } from '../model/run-edits.js';
import { dependentsOf } from '../model/dependencies.js';
import { resolveDependencies } from '../operations/dependencies.js';
import { setHeld, type HoldResult } from './hold.js';
import { dependencyArrays, parkedReason } from '../model/parked.js';
import { readArrayTallies } from '../operations/array-tallies.js';
import { restartRuns, type RestartResult } from './restart.js';
import type { RunAttempt } from '../model/run-record.js';
import { prepareArray } from '../model/sweep.js';
import { whyWaiting } from '../model/why-waiting.js';
import { waitRuns, type WaitOptions } from './wait.js';
import { NOTIFY_SETTING, validateNotifyUrl } from '../model/notify.js';
import { setDrained as setDrainedOf } from './drain.js';
import type { RunVerdict } from '../model/explain.js';
import { serverTimeMs, withWorkerLiveness } from '../model/liveness.js';
import { readWorkers } from '../operations/workers.js';
import type { WorkerRecord } from '../model/worker-record.js';
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
  /** Hears, once, that the Redis user may only read, so upkeep was skipped (READ_ONLY_NOTE). */
  onNote?: (note: string) => void;
}

/**
 * Said to a user Redis refuses EVAL (the reader's rule in docs/security.md):
 * what it reads is as Redis holds it, without the upkeep fitq does before
 * reading. Live workers do that upkeep as they poll.
 */
export const READ_ONLY_NOTE =
  "this Redis user may only read (Redis refused it EVAL): fitq did not reap dead workers or catch up with BullMQ's API before reading; live workers do both as they poll";

/** A key of another type (written by hand) reads as holding nothing; any other error stands. */
function wrongTypeAsZero(error: unknown): 0 {
  if (error instanceof Error && error.message.startsWith('WRONGTYPE')) return 0;
  throw error;
}

/** Whether Redis refused the user a script call itself (NOPERM for EVAL or EVALSHA), not a command inside one. */
function isEvalRefused(error: unknown): boolean {
  return error instanceof Error && /^NOPERM\b.*'eval(sha)?' command/i.test(error.message);
}

/** Which ended runs `cleanRuns` removes: all given must hold. */
export interface CleanOptions {
  /** Only runs with these statuses (ended ones only); default: every ended run. */
  statuses?: readonly RunStatus[];
  /** Only runs that ended more than this many ms ago (by the Redis server's clock). */
  olderThanMs?: number;
  /** Keep this many, the most recently ended, of the runs with those statuses. */
  keep?: number;
}

/** The namespace's retention, and which settings it holds (the others are defaults). */
export interface RetentionState {
  retention: Retention;
  stored: RetentionSetting[];
}

export interface StageResult {
  runs: RunRecord[];
  /** One line per group of runs that no live worker could ever start. */
  warnings: string[];
}

/** What cancelRuns did to one run, and the run as it is now. */
export interface CancelResult {
  id: string;
  outcome: 'canceled' | 'requested' | 'ended' | 'removed';
  /** Absent once the run has been removed. */
  run?: RunRecord;
}

/** A run with its exact demands (the record's are numbers, for JSON). */
interface StoredRun {
  run: RunRecord;
  demands: Resources;
}

/** The one error for a run id that names no run. */
function unknownRun(ref: string): UsageError {
  return refusal(SCRIPT_CODES.unknownRun, ref)!;
}

/**
 * A watched run was removed before its end could be read: by `fitq runs rm`
 * or `runs clean`, or by history retention as other runs ended after it.
 */
export class RunRemovedError extends UsageError {
  constructor(readonly runId: string) {
    super(`run ${quote(runId)} was removed before its end could be read (fitq runs rm, fitq runs clean, or history retention: fitq retention)`);
  }
}

/** Candidates named when a run id prefix is ambiguous. */
const SHOWN_CANDIDATES = 5;

/**
 * Runs staged per script call (a call of this many holds Redis a few ms); a
 * larger batch goes as several calls, hidden from readers until committed.
 */
const STAGE_CHUNK = 500;

/** How long a batch staged in chunks stays open after each chunk: a stager silent this long is taken as dead. */
const BATCH_TTL_MS = 60_000;

/** Runs removed per removeRuns script call (a call of this many holds Redis a few ms). */
const REMOVE_CHUNK = 500;

/** Runs removed per cleanRuns script call. */
const CLEAN_BATCH = 500;

/** Run statuses read per round trip when selecting runs to clean. */
const STATUS_READ_CHUNK = 5000;

/** Dead workers reaped per script call. */
const REAP_BATCH = 50;
/** Reads of every run before one whose number of ids did not change meanwhile is taken as it is (getAllRuns). */
const ALL_RUNS_ATTEMPTS = 3;

/** Jobs and events looked at per reconcile call, and the most calls one reconcile makes. */
const RECONCILE_BUDGET = 500;
const RECONCILE_MAX_CALLS = 10_000;

/** While a followed run is staged, how often to look whether it started. */
const STAGED_CHECK_MS = 2000;

/** Longest wait between two looks at a followed run (a safety net). */
const MAX_CHECK_MS = 60_000;
/**
 * How long waiting for a run to end (cancel, rm --force) takes at most by
 * default: a canceled run ends within its worker's kill grace, a dead
 * worker's within its lease, both usually well below this.
 */
const WAIT_FOR_END_MS = 10 * 60_000;

/** Past the lease deadline the server gave, so the reap finds it lapsed. */
const LAPSE_MARGIN_MS = 5;

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
  /** Set once Redis refused this user EVAL: upkeep (reaping, reconciling) is skipped from then on. */
  private upkeepRefused = false;

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
    const given = Array.isArray(requests) ? (requests as readonly StageRequest[]) : [requests as StageRequest];
    const list = await resolveDependencies(this, this.scripts, given);
    const prepared = list.flatMap((request) => (request.array === undefined ? prepareRuns(request) : prepareArray({ ...request, array: request.array })));
    const runs = signRuns(prepared, this.keys.base, secretKey(this.options.secret));
    const ids = new Set<string>();
    for (const run of runs) {
      if (ids.has(run.id)) throw new UsageError(`run id '${run.id}' given twice`);
      ids.add(run.id);
    }
    const stored = await this.storeRuns(runs);
    const records = runs.map((run, i) =>
      parseRunFields({
        ...run.fields,
        id: run.id,
        status: 'staged',
        seq: String(stored[i]!.seq),
        priority: String(run.priority),
        timestamp: String(stored[i]!.timestamp),
        ...(run.array === undefined ? {} : { array: run.array }),
      }),
    );
    // A run with dependencies may have ended at once (one can never be met): as stored.
    const parked = runs.filter((run) => run.fields.lifecycle !== undefined).map((run) => run.id);
    const asStored = new Map((await this.getRuns(parked)).map(({ run }) => [run.id, run]));
    await this.reap();
    const warnings = await this.stageWarnings(runs.filter((run) => asStored.get(run.id)?.status !== 'canceled'));
    return { runs: records.map((record) => asStored.get(record.id) ?? record), warnings };
  }

  /** Holds staged runs (never claimed until released), or releases held ones; see hold.ts. */
  async holdRuns(runIds: readonly string[]): Promise<HoldResult[]> {
    return setHeld(this, this.scripts, 'hold', runIds);
  }

  /** Releases held runs, back at their original place in the order; see hold.ts. */
  async releaseRuns(runIds: readonly string[]): Promise<HoldResult[]> {
    return setHeld(this, this.scripts, 'release', runIds);
  }

  /** Stages ended runs again, each a fresh attempt with the same id; see restart.ts. */
  async restartRuns(runIds: readonly string[], options: { cascade?: boolean } = {}): Promise<RestartResult[]> {
    return restartRuns(this, this.scripts, runIds, options.cascade === true);
  }

  /**
   * Stores runs: one script call, or for more than STAGE_CHUNK runs a hidden
   * batch of calls and its commit; returns each run's staging sequence number
   * and time (the Redis server's clock).
   */
  private async storeRuns(runs: PreparedRun[]): Promise<{ seq: number; timestamp: number }[]> {
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
      replies.push(await this.scripts.stageRuns(chunks[0]!));
    } else {
      // One script call per chunk, so Redis is never held long; the runs stay
      // hidden from fitq's readers until the commit, so a batch is all or
      // nothing to them. Given up, the chunks staged go again.
      const id = randomBytes(8).toString('hex');
      try {
        for (const [i, chunk] of chunks.entries()) {
          replies.push(await this.scripts.stageRuns(chunk, undefined, { id, ttlMs: BATCH_TTL_MS, first: i === 0 }));
        }
        await this.scripts.commitBatch(id);
      } catch (error) {
        // (The failed chunk's too: its call may have run though its reply was lost.)
        await this.abortBatch(id, chunks.slice(0, replies.length + 1).flat().map((run) => run.id)).catch(() => {});
        throw error;
      }
    }
    return replies.flatMap((batch, chunk) => chunks[chunk]!.map((_, i) => ({ seq: (batch?.firstSeq ?? 0) + i, timestamp: batch?.timestamp ?? 0 })));
  }

  /**
   * Removes the runs a stager staged of a batch it gives up, in bounded
   * calls, and ends the batch. (If this fails too, claims remove them once
   * the batch's deadline passed; readers never see them.)
   */
  private async abortBatch(batch: string, runIds: string[]): Promise<void> {
    for (let i = 0; i < runIds.length; i += STAGE_CHUNK) {
      await this.scripts.abortBatch(batch, runIds.slice(i, i + STAGE_CHUNK), false);
    }
    await this.scripts.abortBatch(batch, [], true);
  }

  /**
   * One warning per reason for the staged runs that no live worker could
   * ever start, as judged where they are now (one explainRuns call), as
   * `stage` warns of its runs: `run X updated, but no live worker can run it
   * yet: …`. Runs no longer staged are left out.
   */
  async unrunnableWarnings(runIds: readonly string[], done: string): Promise<string[]> {
    if (runIds.length === 0) return [];
    const verdicts = await this.scripts.explainRuns(runIds);
    const byReason = new Map<string, string[]>();
    verdicts.forEach((verdict, i) => {
      const judged = verdict && whyWaiting(verdict, { ignorePause: true });
      if (!judged || judged.runnable) return;
      byReason.set(judged.reason, [...(byReason.get(judged.reason) ?? []), runIds[i]!]);
    });
    return [...byReason].map(([reason, ids]) => unrunnableWarning(ids, done, reason));
  }

  /** One warning per shape of the staged runs that no live worker could ever start (one explainRuns call). */
  private async stageWarnings(runs: PreparedRun[]): Promise<string[]> {
    const byShape = new Map<string, PreparedRun[]>();
    for (const run of runs) {
      const shape = runShape(run);
      const group = byShape.get(shape);
      if (group) group.push(run);
      else byShape.set(shape, [run]);
    }
    const verdicts = await this.scripts.explainRuns([], [...byShape.keys()]);
    const warnings: string[] = [];
    for (const [i, group] of [...byShape.values()].entries()) {
      const verdict = whyWaiting(verdicts[i]!, { ignorePause: true });
      if (verdict.runnable) continue;
      warnings.push(unrunnableWarning(group.map((run) => run.id), 'staged', verdict.reason));
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

  /**
   * Removes pool resources; runs holding some keep it until they end. An
   * array's limit only once the array has no staged or running runs (they
   * would never start without it).
   */
  async removePool(names: readonly string[]): Promise<void> {
    if (names.length === 0) throw new UsageError('name the pool resources to remove');
    await this.scripts.setPool('remove', [...names]);
  }

  /** The pool's resources with capacity and current use; arrays' limits with how their runs stand. */
  async listPool(): Promise<PoolResource[]> {
    return listPool(this.redis, this.keys);
  }

  /**
   * Live workers with capacity, usage, runs and liveness, after reaping any
   * whose lease expired. One whose lease lapses between the reap and the
   * read is reaped too, never shown as alive.
   */
  async listWorkers(): Promise<WorkerRecord[]> {
    for (let attempt = 1; ; attempt++) {
      await this.reap();
      const workers = await readWorkers(this.redis, this.keys);
      const live = workers.filter((worker) => worker.liveness.leaseLeftMs >= 0);
      if (live.length === workers.length || attempt === 3 || this.upkeepRefused) return live;
    }
  }

  /**
   * Reaps every worker whose lease ran out (a batch per script call); returns
   * ms until the next lease runs out. Skipped (undefined) while Redis is out
   * of memory: reaping writes, and what is read meanwhile shows a dead
   * worker's runs as not responding.
   */
  private async reap(scripts = this.scripts): Promise<number | undefined> {
    for (;;) {
      const result = await this.upkeep(() => scripts.reapWorkers(REAP_BATCH));
      if (!result) return undefined;
      if (result.reaped.length < REAP_BATCH) return result.msUntilNext;
    }
  }

  /**
   * Runs an upkeep script (reaping, reconciling); undefined when it cannot
   * run: while Redis is out of memory (upkeep writes), and, once noted, when
   * Redis refuses this user EVAL. Either way a reader still gets its answer.
   */
  private async upkeep<T>(call: () => Promise<T>): Promise<T | undefined> {
    if (this.upkeepRefused) return undefined;
    try {
      return await call();
    } catch (error) {
      if (isOutOfMemory(error)) return undefined;
      if (!isEvalRefused(error)) throw error;
      this.upkeepRefused = true;
      this.options.onNote?.(READ_ONLY_NOTE);
      return undefined;
    }
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
   * Drains live workers, on any machine (they finish what they run, claim
   * nothing more, drop their hold on a blocked head and stay registered),
   * or undrains them. An unknown name is a UsageError and nothing changes.
   * Returns the workers as they are now, and which of them changed.
   */
  async setDrained(names: readonly string[], drained: boolean): Promise<{ worker: WorkerRecord; changed: boolean }[]> {
    const parts = { scripts: this.scripts, listWorkers: () => this.listWorkers(), readWorkers: () => readWorkers(this.redis, this.keys) };
    return setDrainedOf(parts, names, drained);
  }

  /**
   * Waits until `done` holds for the live workers: checked at once, whenever
   * a worker joins or leaves (pub/sub), and every second besides (a dead
   * worker leaves only once someone reaps it). Resolves false after
   * `timeoutMs`, or when `signal` aborts.
   */
  async waitForWorkers(done: (workers: WorkerRecord[]) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const subscriber = await connectRedis({ ...this.options, evictionCheck: undefined }, true);
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

  /**
   * Runs in staging order, optionally only some statuses, labels or an
   * array (its id, or a unique prefix of one); staged
   * runs carry why they wait, running runs whose worker is not responding say so.
   */
  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    if (filter.array !== undefined) filter = { ...filter, array: await this.resolveArrayId(filter.array) };
    await this.reconcile();
    const workers = await this.listWorkers();
    const all = (await this.selectRuns({})).map(({ run }) => run);
    // Who waits for whom, from every run (a filter may leave out either side).
    const dependents = dependentsOf(all);
    const statuses = new Map(all.map((run) => [run.id, run.status as string]));
    const runs = all.filter((run) => matchesFilter(run, filter)).map((run) => {
      const waiting = dependents.get(run.id);
      return waiting ? { ...run, dependents: waiting } : run;
    });
    const tallies = await readArrayTallies(this.redis, this.keys, runs.flatMap((run) => (run.waitingForDependencies ? dependencyArrays(run.after) : [])));
    // Parked runs (held, not begun, waiting for dependencies) say why; every other staged run is explained in one script call.
    const parked = new Map(runs.flatMap((run) => {
      const reason = run.status === 'staged' || run.status === 'held' ? parkedReason(run, (id) => statuses.get(id), (array) => tallies.get(array)) : undefined;
      return reason === undefined ? [] : [[run.id, reason] as const];
    }));
    const staged = runs.filter((run) => run.status === 'staged' && !parked.has(run.id)).map((run) => run.id);
    const verdicts = new Map(staged.length > 0 ? (await this.scripts.explainRuns(staged)).map((verdict, i) => [staged[i]!, verdict]) : []);
    return runs.map((run) => (parked.has(run.id) ? { ...run, reason: parked.get(run.id) } : this.withWaitReason(run, workers, verdicts.get(run.id))));
  }

  /**
   * Brings fitq's index in line with what BullMQ's API (or Bull Board) did to
   * the namespace's queue: runs BullMQ retried are staged again, runs it
   * deleted are forgotten, jobs added without fitq's run data end rejected,
   * priorities it changed are applied (unsigned runs) or undone (signed);
   * see reconcileRuns-12.lua. Workers do it on every poll; `fitq runs` before
   * it lists, and getRun (`fitq runs show`) before it reads. Returns what it
   * did; stops while Redis is out of memory (it writes), so reads go on.
   */
  async reconcile(): Promise<ReconcileAction[]> {
    const actions: ReconcileAction[] = [];
    for (let calls = 0; calls < RECONCILE_MAX_CALLS; calls++) {
      const result = await this.upkeep(() => this.scripts.reconcileRuns(RECONCILE_BUDGET));
      if (!result) break;
      actions.push(...result.actions);
      if (!result.more) break;
    }
    return actions;
  }

  /** Whether the namespace's queue is paused (fitq pause, or BullMQ's pause: any value of `paused`). */
  async isPaused(): Promise<boolean> {
    return (await this.redis.hexists(this.keys.queue.key('meta'), 'paused')) === 1;
  }

  /**
   * Pauses the queue (no worker starts a run until resumed; running runs go
   * on) or resumes it; false when it already was so.
   */
  async setPaused(paused: boolean): Promise<boolean> {
    return this.scripts.setPaused(paused);
  }

  /**
   * The runs that references name (full ids or unique prefixes, resolved
   * first: see resolveRunIds) and, with a filter, every run matching it; in
   * that order, each once.
   */
  async selectRunIds(refs: readonly string[], filter?: RunFilter): Promise<string[]> {
    const named = await this.resolveRunIds(refs);
    const matching = filter ? (await this.selectRuns(filter)).map(({ run }) => run.id) : [];
    return [...new Set([...named, ...matching])];
  }

  /**
   * The runs that references name and, with a filter, every run matching
   * it, as records (named ones first, then the others in staging order;
   * each once). A filter's `array` may be a unique prefix of an array id.
   */
  async selectRunRecords(refs: readonly string[], filter?: RunFilter): Promise<RunRecord[]> {
    const named = await this.resolveRunIds(refs);
    const resolved = filter?.array === undefined ? filter : { ...filter, array: await this.resolveArrayId(filter.array) };
    const matching = resolved ? await this.selectRuns(resolved) : [];
    const byId = new Map(matching.map(({ run }) => [run.id, run]));
    const missing = named.filter((id) => !byId.has(id));
    for (const { run } of await this.getRuns(missing)) byId.set(run.id, run);
    const ids = [...new Set([...named, ...matching.map(({ run }) => run.id)])];
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** Runs matching a filter, in staging order, with their exact demands. */
  private async selectRuns(filter: RunFilter): Promise<StoredRun[]> {
    const runs = await this.getAllRuns();
    return runs.filter(({ run }) => matchesFilter(run, filter)).sort((a, b) => a.run.seq - b.run.seq);
  }

  /** One run; throws UsageError for an unknown id. (Reaps only to judge why a staged run waits.) */
  async getRun(runId: string): Promise<RunRecord> {
    // As BullMQ's API or Bull Board may have left it (retried, removed, re-prioritized).
    await this.reconcile();
    const { run: stored } = await this.readRun(this.redis, runId);
    const run = await this.withHistory(stored);
    if (run.status === 'running') return withWorkerLiveness(run, await readWorkers(this.redis, this.keys));
    if (run.status === 'staged' || run.status === 'held') {
      const deps = [...new Set((run.after ?? []).flatMap((group) => group.ids))];
      const statuses = new Map((await this.getRuns(deps)).map(({ run: dep }) => [dep.id, dep.status as string]));
      const tallies = await readArrayTallies(this.redis, this.keys, dependencyArrays(run.after));
      const reason = parkedReason(run, (id) => statuses.get(id), (array) => tallies.get(array));
      if (reason !== undefined) return { ...run, reason };
    }
    if (run.status !== 'staged') return run;
    await this.reap();
    const [verdict] = await this.scripts.explainRuns([run.id]);
    return this.withWaitReason(run, [], verdict);
  }

  /** A run with the runs that wait for it (or for its whole array) and its earlier attempts, read in one round trip. */
  private async withHistory(run: RunRecord): Promise<RunRecord> {
    const pipeline = this.redis.pipeline();
    pipeline.lrange(this.keys.runAttempts(run.id), 0, -1);
    // SMEMBERS each, not SUNION: the roles' ACL rules allow SMEMBERS (docs/security.md).
    pipeline.smembers(this.keys.dependents(run.id));
    if (run.array !== undefined) pipeline.smembers(this.keys.arrayDependents(run.array));
    const [attempts, ...dependentSets] = (await execPipeline(pipeline, { wrongTypeAsNull: true })) as [string[] | null, ...(string[] | null)[]];
    const dependents = [...new Set(dependentSets.flatMap((set) => set ?? []))];
    const parsed = (attempts ?? []).flatMap((text) => {
      try {
        return [JSON.parse(text) as RunAttempt];
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

  /**
   * The run ids that references name: each a full id, or a prefix of exactly
   * one run id (a full id wins over the longer ids it prefixes). An unknown
   * or ambiguous reference is a UsageError, naming it (the candidates too).
   */
  async resolveRunIds(refs: readonly string[]): Promise<string[]> {
    refs.forEach(validateRunId);
    if (refs.length === 0) return [];
    const found = await this.scripts.resolveRunIds(refs, SHOWN_CANDIDATES);
    return refs.map((ref, i) => {
      const ids = found[i] ?? [];
      if (ids.length === 0) throw unknownRun(ref);
      if (ids.length > 1) {
        const more = ids.length > SHOWN_CANDIDATES ? ', …' : '';
        throw new UsageError(`run id prefix ${quote(ref)} is ambiguous: ${ids.slice(0, SHOWN_CANDIDATES).join(', ')}${more}`);
      }
      return ids[0]!;
    });
  }

  /** resolveRunIds for one reference. */
  async resolveRunId(ref: string): Promise<string> {
    const [id] = await this.resolveRunIds([ref]);
    return id!;
  }

  /**
   * The array an id names: a full array id, or a prefix of exactly one
   * (as for runs). An unknown or ambiguous one is a UsageError, naming it.
   */
  async resolveArrayId(ref: string): Promise<string> {
    validateRunId(ref);
    const arrays = Object.keys(await this.redis.hgetall(this.keys.arrays).catch(() => ({})));
    if (arrays.includes(ref)) return ref;
    const found = arrays.filter((id) => id.startsWith(ref)).sort();
    if (found.length === 0) throw new UsageError(`unknown array ${quote(ref)} (no run of the namespace is part of it)`);
    if (found.length > 1) throw new UsageError(`array id prefix ${quote(ref)} is ambiguous: ${found.slice(0, SHOWN_CANDIDATES).join(', ')}${found.length > SHOWN_CANDIDATES ? ', …' : ''}`);
    return found[0]!;
  }

  /** One run as stored, read over the given connection. */
  private async readRun(redis: Redis, runId: string): Promise<StoredRun> {
    validateRunId(runId);
    const hash = await redis.hgetall(this.keys.run(runId));
    // A run of a batch not committed (still in `batches`) is not there yet; a `batches` written by hand as another type holds none.
    if (!hash.status || (hash.batch !== undefined && (await redis.hexists(this.keys.batches, hash.batch).catch(wrongTypeAsZero)) === 1)) {
      throw unknownRun(runId);
    }
    if (bullDataAltered(hash)) await this.putBackData([runId]);
    const fields = runFields(runId, hash);
    return { run: parseRunFields(fields), demands: runDemands(fields) };
  }

  /**
   * Has reconcileRuns put back the job data BullMQ rewrote (job.updateData)
   * of runs a read found so: nothing else shows it. What fitq reads is its
   * own copy, as the run was staged or updated, either way.
   */
  private async putBackData(runIds: readonly string[]): Promise<void> {
    for (let i = 0; i < runIds.length; i += RECONCILE_BUDGET) {
      await this.upkeep(() => this.scripts.reconcileRuns(RECONCILE_BUDGET, runIds.slice(i, i + RECONCILE_BUDGET)));
    }
  }

  /** Runs as stored (no reconcile, no reason judged), in the order given; an id that is no run is left out. */
  async readRuns(ids: readonly string[]): Promise<RunRecord[]> {
    return (await this.getRuns(ids)).map(({ run }) => run);
  }

  /**
   * Every run, in one consistent view: a batch whose commit fell between
   * reading the ids and reading the runs showed in part (the ids staged so
   * far, no longer hidden), so the ids are read again while their number
   * changed meanwhile (no MULTI: fitq's documented ACL rules do not allow it).
   */
  private async getAllRuns(): Promise<StoredRun[]> {
    for (let attempt = 1; ; attempt++) {
      const ids = await this.redis.zrange(this.keys.ids, 0, -1);
      const { runs, idCount } = await this.readStoredRuns(ids, this.redis);
      if (idCount === ids.length || attempt === ALL_RUNS_ATTEMPTS) return runs;
    }
  }

  private async getRuns(ids: readonly string[], redis: Redis = this.redis): Promise<StoredRun[]> {
    return (await this.readStoredRuns(ids, redis)).runs;
  }

  /** The runs of `ids` that exist and are committed, and how many ids the namespace had as they were read. */
  private async readStoredRuns(ids: readonly string[], redis: Redis): Promise<{ runs: StoredRun[]; idCount: number }> {
    const pipeline = redis.pipeline();
    pipeline.hgetall(this.keys.batches);
    for (const id of ids) pipeline.hgetall(this.keys.run(id));
    pipeline.zcard(this.keys.ids);
    // An id whose key holds no hash (written by hand) is no run; a `batches` of another type holds no batch.
    const [batchReply, ...replies] = await execPipeline(pipeline, { wrongTypeAsNull: true });
    const idCount = Number(replies.pop() ?? 0);
    // Runs of a batch not committed are not there yet (read with them, in one round trip).
    const open = new Set(Object.keys((batchReply ?? {}) as Record<string, string>));
    const altered: string[] = [];
    const runs = replies.flatMap((reply, i) => {
      const hash = (reply ?? {}) as Record<string, string>;
      if (!hash.status || (hash.batch !== undefined && open.has(hash.batch))) return [];
      if (bullDataAltered(hash)) altered.push(ids[i]!);
      const fields = runFields(ids[i]!, hash);
      return [{ run: parseRunFields(fields), demands: runDemands(fields) }];
    });
    await this.putBackData(altered);
    return { runs, idCount };
  }

  /**
   * A running run with its worker's liveness, a staged one with why it
   * waits (its verdict from explainRuns; none: it is no longer staged).
   */
  private withWaitReason(run: RunRecord, workers: WorkerRecord[], verdict: RunVerdict | undefined): RunRecord {
    if (run.status === 'running') return withWorkerLiveness(run, workers);
    if (run.status !== 'staged' || !verdict) return run;
    return { ...run, reason: whyWaiting(verdict).reason };
  }

  /**
   * Cancels a run: a staged one at once; a running one is stopped by its
   * worker (SIGTERM to its process group, SIGKILL after a grace period).
   * With `wait`, resolves once the run has ended. A run that has already
   * ended is a UsageError.
   */
  async cancelRun(runId: string, options: { wait?: boolean; timeoutMs?: number } = {}): Promise<RunRecord> {
    const [result] = await this.cancelRuns([runId], options);
    // Gone after its cancellation: removed meanwhile (rm, clean, or retention as other runs ended).
    if (!result?.run) throw result && result.outcome !== 'removed' ? new RunRemovedError(runId) : unknownRun(runId);
    if (result.outcome === 'ended') throw new UsageError(`run '${runId}' already ended (${result.run.status})`);
    return result.run;
  }

  /**
   * Cancels runs, each as cancelRun does; the ids are all checked first, so
   * an unknown one (UsageError) cancels nothing. Reports per run what
   * happened and the run as it is now: `canceled` (it was staged),
   * `requested` (it was running: with `wait`, it has ended since), `ended`
   * (it had already ended) or `removed` (removed meanwhile: no run).
   */
  async cancelRuns(runIds: readonly string[], options: { wait?: boolean; timeoutMs?: number } = {}): Promise<CancelResult[]> {
    const ids = [...new Set(runIds)];
    ids.forEach(validateRunId);
    const exists = this.redis.pipeline();
    for (const id of ids) exists.exists(this.keys.run(id));
    const missing = (await execPipeline(exists)).findIndex((count) => count !== 1);
    if (missing >= 0) throw unknownRun(ids[missing]!);
    // Every cancellation is requested before waiting for any, so running runs stop together.
    const outcomes: { id: string; outcome: CancelResult['outcome'] }[] = [];
    for (const id of ids) {
      const { outcome } = await this.scripts.cancelRun(id);
      outcomes.push({ id, outcome: outcome === 'unknown' ? 'removed' : outcome });
    }
    const results: CancelResult[] = [];
    for (const { id, outcome } of outcomes) {
      if (outcome === 'removed') results.push({ id, outcome });
      else if (outcome === 'requested' && options.wait) results.push(await this.waitForEnd(id, options.timeoutMs).then(
        (run) => ({ id, outcome, run }),
        (error: unknown) => {
          if (error instanceof RunRemovedError) return { id, outcome: 'removed' as const };
          throw error;
        },
      ));
      else results.push({ id, outcome, run: await this.getRun(id).catch(() => undefined) });
    }
    return results;
  }

  /**
   * Edits staged (and held) runs: priority, demands, labels, pinned GPUs
   * (see update.ts). Signed runs are re-signed with this client's secret,
   * or refused without it. Returns what happened to each run.
   */
  async updateRuns(runIds: readonly string[], changes: RunChanges, options: UpdateOptions = {}): Promise<UpdateResult[]> {
    // As BullMQ's API may have left them (a priority it changed is reconciled first).
    await this.reconcile();
    const context = { redis: this.redis, keys: this.keys, scripts: this.scripts, secret: secretKey(this.options.secret) };
    return updateRuns(context, runIds, changes, options);
  }

  /**
   * Resolves when the run has ended (a run whose worker died ends as lost as
   * soon as the lease runs out). Survives Redis restarts.
   */
  async waitForEnd(runId: string, timeoutMs = WAIT_FOR_END_MS): Promise<RunRecord> {
    validateRunId(runId);
    const last = await this.redis.xrevrange(this.keys.runLog(runId), '+', '-', 'COUNT', 1);
    return this.watchRun(runId, last[0]?.[0] ?? '0', () => {}, { timeoutMs });
  }

  /**
   * Resolves with the runs' records, in the order given (ids or unique
   * prefixes; an unknown one is a UsageError before anything is waited
   * for), once every one has ended: see wait.ts. A run whose worker died
   * ends as lost as soon as the lease runs out. Gives up after `timeoutMs`,
   * or when `signal` aborts, with a WaitIncompleteError holding every run
   * as it is then; a run removed before its end could be read is a
   * RunRemovedError. Survives Redis restarts.
   */
  async waitForRuns(refs: readonly string[], options: WaitOptions = {}): Promise<RunRecord[]> {
    const ids = await this.resolveRunIds(refs);
    const waiter = await connectRedis({ ...this.options, evictionCheck: undefined }, true);
    const waiterScripts = new Scripts(waiter, this.keys, this.logMaxLines);
    try {
      return await waitRuns({
        redis: waiter,
        keys: this.keys,
        unblock: (clientId) => this.redis.client('UNBLOCK', clientId),
        reap: () => this.reap(waiterScripts),
        readRuns: async (runIds) => (await this.getRuns(runIds, waiter)).map(({ run }) => run),
        removed: (id) => new RunRemovedError(id),
      }, ids, options);
    } finally {
      await closeRedis(waiter);
    }
  }

  /**
   * Removes runs and their logs, all or nothing up to REMOVE_CHUNK runs (one
   * script call each, so Redis is never held long; more go in parts, in the
   * order given). A running run is refused unless `force`, which cancels it
   * and waits for it to end first. A part refused after others went (a run
   * started or was removed meanwhile) says how many were removed before.
   */
  async removeRuns(runIds: readonly string[], options: { force?: boolean } = {}): Promise<number> {
    runIds.forEach(validateRunId);
    if (options.force) {
      const running = (await this.getRuns(runIds)).filter(({ run }) => run.status === 'running').map(({ run }) => run.id);
      // Stopped together; one that ends meanwhile is fine.
      if (running.length > 0) await this.cancelRuns(running, { wait: true });
    }
    const ids = [...new Set(runIds)];
    let removed = 0;
    for (let i = 0; i < ids.length; i += REMOVE_CHUNK) {
      try {
        removed += await this.scripts.removeRuns(ids.slice(i, i + REMOVE_CHUNK));
      } catch (error) {
        if (removed === 0 || !(error instanceof UsageError)) throw error;
        throw new UsageError(`removed ${removed} of ${ids.length} runs, then stopped: ${error.message}`);
      }
    }
    return removed;
  }

  /**
   * Removes ended runs now, with their logs and keys: the runs
   * selectCleanRuns selects, or of `selected` (its earlier answer) those
   * that still have those statuses and ended by then. Returns how many runs
   * it removed.
   */
  async cleanRuns(options: CleanOptions = {}, selected?: readonly string[]): Promise<number> {
    const { statuses, latest, ids } = await this.cleanSelection(options, selected);
    let removed = 0;
    for (let i = 0; i < ids.length; i += CLEAN_BATCH) {
      removed += await this.scripts.cleanRuns(statuses, latest, ids.slice(i, i + CLEAN_BATCH));
    }
    return removed;
  }

  /**
   * The runs cleanRuns would remove now, in the order they ended: every
   * ended run, or those with `statuses` that ended more than `olderThanMs`
   * ago, less the `keep` most recently ended of them (all given must hold).
   * Staged and running runs are never selected; asking for them is a
   * UsageError.
   */
  async selectCleanRuns(options: CleanOptions = {}): Promise<string[]> {
    return [...(await this.cleanSelection(options)).ids];
  }

  /** What cleanRuns removes: the statuses and latest end it may remove (checked again by its script), and the run ids. */
  private async cleanSelection(
    options: CleanOptions,
    given?: readonly string[],
  ): Promise<{ statuses: RunStatus[]; latest: number | undefined; ids: readonly string[] }> {
    const statuses = cleanableStatuses(options.statuses);
    for (const [name, value] of [['older than', options.olderThanMs], ['keep', options.keep]] as const) {
      if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
        throw new UsageError(`expected ${name} to be a whole number from 0, got ${quote(String(value))}`);
      }
    }
    const now = serverTimeMs(await this.redis.time());
    // Ended more than olderThanMs ago: at most this.
    const latest = options.olderThanMs === undefined ? undefined : now - options.olderThanMs - 1;
    // (The script removes only runs that still have those statuses and ended by then.)
    if (given !== undefined) return { statuses, latest, ids: given };
    const states = [
      ...(statuses.includes('completed') ? ['completed'] : []),
      ...(statuses.some((status) => status !== 'completed') ? ['failed'] : []),
    ];
    const ended: { id: string; finishedOn: number }[] = [];
    for (const state of states) {
      const flat = await this.redis.zrange(this.keys.queue.key(state), 0, -1, 'WITHSCORES');
      for (let i = 0; i + 1 < flat.length; i += 2) ended.push({ id: flat[i]!, finishedOn: Number(flat[i + 1]) });
    }
    const status = new Map<string, string | null>();
    for (let i = 0; i < ended.length; i += STATUS_READ_CHUNK) {
      const pipeline = this.redis.pipeline();
      const chunk = ended.slice(i, i + STATUS_READ_CHUNK);
      for (const { id } of chunk) pipeline.hget(this.keys.run(id), 'status');
      (await execPipeline(pipeline)).forEach((reply, j) => status.set(chunk[j]!.id, reply as string | null));
    }
    // Newest first: the first `keep` stay.
    const selected = ended
      .filter(({ id }) => (statuses as readonly string[]).includes(status.get(id) ?? ''))
      .sort((a, b) => b.finishedOn - a.finishedOn || (a.id < b.id ? 1 : -1))
      .slice(options.keep ?? 0)
      .filter(({ finishedOn }) => latest === undefined || finishedOn <= latest)
      .map(({ id }) => id)
      .reverse();
    return { statuses, latest, ids: selected };
  }

  /** The namespace's notification URL (fitq notify), if set. */
  async getNotifyUrl(): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.settings, NOTIFY_SETTING)) ?? undefined;
  }

  /**
   * Sets the namespace's notification URL (null: clears it): workers POST a
   * run's record there when it ends, unless the run has its own --notify.
   * A URL that is not http(s) is a UsageError. Returns whether it changed.
   */
  async setNotifyUrl(url: string | null): Promise<boolean> {
    return this.scripts.setNotify(url === null ? '' : validateNotifyUrl(url, 'URL'));
  }

  /** The namespace's history retention (see setRetention). */
  async getRetention(): Promise<RetentionState> {
    return readRetention(await this.redis.hgetall(this.keys.settings));
  }

  /**
   * Changes the namespace's history retention: how many completed runs, and
   * how many failed, canceled, lost, rejected and timed-out runs together, are kept,
   * and for how long after they ended (null: no limit; a setting not given
   * stays as it is; `reset` first puts every setting back to its default).
   * Each run's end then removes the oldest runs beyond them; the runs beyond
   * them already are removed at once. Returns the retention now and how
   * many runs were removed.
   */
  async setRetention(changes: Partial<Retention>, options: { reset?: boolean } = {}): Promise<RetentionState & { removed: number }> {
    const values: [string, string][] = options.reset ? RETENTION_SETTINGS.map((setting) => [setting, '']) : [];
    for (const setting of RETENTION_SETTINGS) {
      const value = changes[setting];
      if (value === undefined) continue;
      validateLimit(setting, value);
      values.push([setting, storedLimit(value)]);
    }
    const state = readRetention(await this.scripts.setRetention(values));
    return { ...state, removed: await this.applyRetention(state.retention) };
  }

  /** Removes the ended runs beyond a retention: too many of a state, or too old. */
  private async applyRetention(retention: Retention): Promise<number> {
    let removed = 0;
    if (retention.keepCompleted !== null) removed += await this.cleanRuns({ statuses: ['completed'], keep: retention.keepCompleted });
    if (retention.keepFailed !== null) {
      removed += await this.cleanRuns({ statuses: ENDED_STATUSES.filter((status) => status !== 'completed'), keep: retention.keepFailed });
    }
    if (retention.keepAgeMs !== null) removed += await this.cleanRuns({ olderThanMs: retention.keepAgeMs });
    return removed;
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
   * ends (or `signal` aborts); a run whose worker died ends as lost as soon
   * as the lease runs out. Reconnects by itself if Redis restarts.
   */
  async followLog(runId: string, onEntry: (entry: LogEntry) => void, signal?: AbortSignal): Promise<RunRecord> {
    await this.readRun(this.redis, runId); // an unknown id is refused; no reap or wait reason is needed here
    return this.watchRun(runId, '0', onEntry, { signal });
  }

  /**
   * Passes a run's log entries after `after` to `onEntry` until the run ends.
   * Waits on the log stream and the queue's event stream (no polling): the
   * run's events (its start, its end, even when its log was packed and its
   * stream deleted, its removal) make it look at the run at once. It reaps
   * at the moment the next lease runs out, as the server tells: nothing else
   * would end a run whose worker died. While the run is staged it looks
   * every few seconds whether it started. Everything goes over a resilient
   * connection of its own, so a Redis restart is survived.
   */
  private async watchRun(
    runId: string,
    after: string,
    onEntry: (entry: LogEntry) => void,
    options: { signal?: AbortSignal | undefined; timeoutMs?: number },
  ): Promise<RunRecord> {
    const { signal, timeoutMs } = options;
    const deadline = timeoutMs === undefined ? Infinity : performance.now() + timeoutMs;
    const follower = await connectRedis({ ...this.options, evictionCheck: undefined }, true);
    const followerScripts = new Scripts(follower, this.keys, this.logMaxLines);
    // Aborting interrupts a blocked read at once.
    const followerId = await follower.client('ID');
    const onAbort = () => void this.redis.client('UNBLOCK', followerId).catch(() => {});
    signal?.addEventListener('abort', onAbort, { once: true });
    // The run existed when the watch began: gone now, it was removed.
    const readWatched = async (): Promise<RunRecord> => {
      try {
        return (await this.readRun(follower, runId)).run;
      } catch (error) {
        if (error instanceof UsageError && (await follower.exists(this.keys.run(runId))) === 0) throw new RunRemovedError(runId);
        throw error;
      }
    };
    try {
      // Taken before the run is first looked at: any later event of the run is after it.
      let eventsAfter = await lastEventId(follower, this.keys);
      let checkAt = 0; // when to reap and look at the run again
      for (;;) {
        if (signal?.aborted) return readWatched();
        if (performance.now() >= Math.min(checkAt, deadline)) {
          const msUntilNext = await this.reap(followerScripts);
          const run = await readWatched();
          if (isEnded(run)) {
            // Whatever came before its end marker.
            for (let page = await readLogEntries(follower, this.keys, runId, after); page.length > 0; ) {
              page.forEach(onEntry);
              after = page[page.length - 1]!.id;
              page = await readLogEntries(follower, this.keys, runId, after);
            }
            return run;
          }
          if (performance.now() >= deadline) {
            throw new TimeoutError(`run '${runId}' did not end within ${Math.round((timeoutMs ?? 0) / 1000)} s`);
          }
          const wait = run.status === 'running' && msUntilNext !== undefined ? msUntilNext + LAPSE_MARGIN_MS : STAGED_CHECK_MS;
          checkAt = performance.now() + Math.min(Math.max(wait, 0), MAX_CHECK_MS);
        }
        // BLOCK 0 would wait forever: at least 1 ms.
        const blockMs = Math.max(1, Math.ceil(Math.min(checkAt, deadline) - performance.now()));
        const waited = await waitLogEntries(follower, this.keys, runId, after, eventsAfter, blockMs);
        eventsAfter = waited.eventsAfter;
        if (waited.runEvent) checkAt = 0;
        for (const entry of waited.entries) {
          onEntry(entry);
          after = entry.id;
          if (entry.kind === 'end') {
            const run = await readWatched();
            // Else the end of an attempt before the run was retried (from BullMQ): it goes on.
            if (isEnded(run)) return run;
          }
          // Staged again: look at once when it starts anew.
          if (entry.kind === 'restaged') checkAt = 0;
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await closeRedis(follower);
    }
  }
}

/** `run X staged, but no live worker can run it yet: …`, `2 runs (X, ...) updated, but …`. */
function unrunnableWarning(ids: readonly string[], done: string, reason: string): string {
  const which = ids.length === 1 ? `run ${ids[0]!}` : `${ids.length} runs (${ids[0]!}, ...)`;
  return `${which} ${done}, but no live worker can run ${ids.length === 1 ? 'it' : 'them'} yet: ${reason}`;
}
