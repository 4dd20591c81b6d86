/**
 * FitqClient: stage, inspect, cancel and remove runs of one namespace.
 *
 * A facade: it connects (and closes), and each method is one call of an
 * operation (src/operations/<name>.ts) with the client's context. A new
 * operation is a module there, taking the context first, and a one-line
 * method here.
 */
import type { RedisConnection } from './redis/connection.js';
import type { ArrayTally } from './model/array-tally.js';
import type { LogEntry } from './model/logs.js';
import type { RunVerdict } from './model/explain.js';
import { DEFAULT_LOG_MAX_LINES } from './model/logs.js';
import type { RunChanges } from './model/run-edits.js';
import type { RunFilter, RunRecord } from './model/run-record.js';
import type { Retention } from './model/retention.js';
import type { StageRequest } from './model/stage.js';
import type { WorkerRecord } from './model/worker-record.js';
import { createContext, type QueueContext } from './operations/context.js';
import { cancelRun, cancelRuns, cleanRuns, removeRuns, selectCleanRuns, type CancelResult, type CleanOptions } from './operations/end.js';
import { followLog, readLog } from './operations/follow-log.js';
import { setHeld, type HoldResult } from './operations/hold.js';
import { resolveArrayId, resolveRunId, resolveRunIds } from './operations/ids.js';
import { listPool, removePool, setPool, type PoolResource } from './operations/pools.js';
import { listQuotas, removeQuota, setQuota, type QuotaOwner, type UserQuota } from './operations/quotas.js';
import { changeFairShare, readFairShare, type FairShareChange } from './operations/fair-share.js';
import type { FairShareState } from './model/fair-share.js';
import { addUserKey, listUserKeys, removeUserKey } from './operations/user-keys.js';
import { getRun, listRuns, readRuns, selectRunIds, selectRunRecords } from './operations/read.js';
import { restartRuns, type RestartResult } from './operations/restart.js';
import { readArrayTallies } from './operations/array-tallies.js';
import { explainWaits } from './operations/explain.js';
import { previewStage, type StagePreview } from './operations/stage-preview.js';
import { countRuns, readRunPage, type RunPage, type RunPageQuery } from './operations/run-pages.js';
import { getNotifyUrl, getRetention, isPaused, setNotifyUrl, setPaused, setRetention, type RetentionState } from './operations/settings.js';
import { stageRuns, type StageResult } from './operations/stage.js';
import { updateRuns, type UpdateOptions, type UpdateResult } from './operations/update.js';
import { reconcile } from './operations/upkeep.js';
import { waitForEnd, waitForRuns, type WaitOptions } from './operations/wait.js';
import { unrunnableWarnings } from './operations/warnings.js';
import { listWorkers, setDrained, stopWorkers, waitForWorkers } from './operations/workers.js';
import { namespaceKeys, type NamespaceKeys } from './queue/keys.js';
import { resolveNamespace, type ClientOptions } from './client-options.js';
import type { ReconcileAction } from './queue/run-calls.js';
import { connectRedis } from './redis/connection.js';
import { closeRedis } from './redis/open-connections.js';
import { secretKey } from './security/secret.js';
import { stagerOf } from './model/stager.js';
import { stagerKey } from './security/user-keys.js';

export { READ_ONLY_NOTE } from './operations/upkeep.js';
export { RunRemovedError } from './operations/run-errors.js';
export type { CancelResult, CleanOptions, RetentionState, StageResult };
export { resolveNamespace, type ClientOptions };

export class FitqClient {
  readonly keys: NamespaceKeys;
  readonly logMaxLines: number;
  /** What the operations work with: this client's connection, keys, scripts and secret. */
  private readonly ctx: QueueContext;

  private constructor(
    /** The command connection; fails fast when Redis is down. */
    readonly redis: RedisConnection,
    options: ClientOptions,
  ) {
    const { queue, prefix } = resolveNamespace(options);
    this.keys = namespaceKeys(queue, prefix);
    this.logMaxLines = options.logMaxLines ?? DEFAULT_LOG_MAX_LINES;
    this.ctx = createContext({
      redis,
      keys: this.keys,
      logMaxLines: this.logMaxLines,
      secret: secretKey(options.secret),
      stager: stagerOf(process.env, options.user),
      userKey: options.keyFile === false ? undefined : stagerKey(options.keyFile),
      // Followers, waiters and subscribers: connections of their own that survive Redis restarts.
      connectResilient: () => connectRedis({ ...options, evictionCheck: undefined }, true),
      onNote: options.onNote,
      replicaWait: options.waitReplicas,
    });
  }

  /** Connects to RedisConnection; throws ConnectionError with one clear line when it cannot. */
  static async connect(options: ClientOptions = {}): Promise<FitqClient> {
    const { queue, prefix } = resolveNamespace(options);
    namespaceKeys(queue, prefix); // validate before connecting
    secretKey(options.secret);
    stagerOf(process.env, options.user); // a bad FITQ_USER is refused before connecting
    if (options.keyFile !== false) stagerKey(options.keyFile); // and a key file that is missing or none
    return new FitqClient(await connectRedis(options), options);
  }

  async close(): Promise<void> {
    await closeRedis(this.redis);
  }

  /** Stages one request (possibly repeated) or several, all in one round trip; see operations/stage.ts. */
  async stage(requests: StageRequest | readonly StageRequest[]): Promise<StageResult> {
    return stageRuns(this.ctx, requests);
  }

  /** What staging these requests would do, writing nothing; see operations/stage-preview.ts. */
  async previewStage(requests: readonly StageRequest[]): Promise<StagePreview> {
    return previewStage(this.ctx, requests);
  }

  /** Holds staged runs (never claimed until released); see operations/hold.ts. */
  async holdRuns(runIds: readonly string[]): Promise<HoldResult[]> {
    return setHeld(this.ctx, 'hold', runIds);
  }

  /** Releases held runs, back at their original place in the order; see operations/hold.ts. */
  async releaseRuns(runIds: readonly string[]): Promise<HoldResult[]> {
    return setHeld(this.ctx, 'release', runIds);
  }

  /** Stages ended runs again, each a fresh attempt with the same id; see operations/restart.ts. */
  async restartRuns(runIds: readonly string[], options: { cascade?: boolean } = {}): Promise<RestartResult[]> {
    return restartRuns(this.ctx, runIds, options.cascade === true);
  }

  /** One warning per reason for the staged runs no live worker could ever start; see operations/warnings.ts. */
  async unrunnableWarnings(runIds: readonly string[], done: string): Promise<string[]> {
    return unrunnableWarnings(this.ctx, runIds, done);
  }

  /** Sets the capacity of cluster-wide pool resources, e.g. `license=4`; see operations/pools.ts. */
  async setPool(resources: string | readonly string[]): Promise<PoolResource[]> {
    return setPool(this.ctx, resources);
  }

  /** Removes pool resources; see operations/pools.ts. */
  async removePool(names: readonly string[]): Promise<void> {
    return removePool(this.ctx, names);
  }

  /** The pool's resources with capacity and current use; arrays' limits with how their runs stand. */
  async listPool(): Promise<PoolResource[]> {
    return listPool(this.ctx);
  }

  /** Users' quotas (set merges, rm removes it or some of its limits, ls lists them with use); see operations/quotas.ts. */
  setQuota = (owner: QuotaOwner, specs: readonly string[]): Promise<UserQuota> => setQuota(this.ctx, owner, specs);
  removeQuota = (owner: QuotaOwner, names: readonly string[] = []): Promise<void> => removeQuota(this.ctx, owner, names);
  listQuotas = (): Promise<UserQuota[]> => listQuotas(this.ctx);

  /** Fair share: change it (shares, weights, half-life, on/off, forget usage), or read it as the claim sees it; see operations/fair-share.ts. */
  changeFairShare = (change: FairShareChange): Promise<FairShareState> => changeFairShare(this.ctx, change);
  fairShare = (): Promise<FairShareState> => readFairShare(this.ctx);

  /** Users' registered public keys (add: true when it replaced another); see operations/user-keys.ts. */
  addUserKey = (user: string, key: string, admin?: boolean): Promise<{ replaced: boolean; admin: boolean }> => addUserKey(this.ctx, user, key, admin);
  removeUserKey = (user: string): Promise<void> => removeUserKey(this.ctx, user);
  listUserKeys = (): Promise<{ user: string; key: string; admin: boolean }[]> => listUserKeys(this.ctx);

  /** Live workers, as RedisConnection holds them (reads only: one whose lease ran out is left out, not reaped); see operations/workers.ts. */
  async listWorkers(): Promise<WorkerRecord[]> {
    return listWorkers(this.ctx);
  }

  /** Asks live workers, on any machine, to stop; see operations/workers.ts. */
  async stopWorkers(names: readonly string[], options: { now?: boolean; wait?: boolean; timeoutMs?: number } = {}): Promise<void> {
    return stopWorkers(this.ctx, names, options);
  }

  /** Drains or undrains live workers, on any machine; see operations/workers.ts. */
  async setDrained(names: readonly string[], drained: boolean): Promise<{ worker: WorkerRecord; changed: boolean }[]> {
    return setDrained(this.ctx, names, drained);
  }

  /** Waits until `done` holds for the live workers; see operations/workers.ts. */
  async waitForWorkers(done: (workers: WorkerRecord[]) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return waitForWorkers(this.ctx, done, timeoutMs, signal);
  }

  /** Runs in staging order, with why staged ones wait; see operations/read.ts. */
  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    return listRuns(this.ctx, filter);
  }

  /** A page of runs in staging order, with why staged ones wait; see operations/run-pages.ts. */
  async readRunPage(query: RunPageQuery): Promise<RunPage> {
    return readRunPage(this.ctx, query);
  }

  /** Why staged runs wait, each as its verdict (none for a run not in the fit index); see operations/explain.ts. */
  async explainWaits(runIds: readonly string[]): Promise<Map<string, RunVerdict>> {
    return explainWaits(this.ctx, runIds);
  }

  /** How the runs of these arrays stand (their tallies); an array fitq does not count is left out. See operations/array-tallies.ts. */
  async readArrayTallies(arrays: Iterable<string>): Promise<Map<string, ArrayTally>> {
    return readArrayTallies(this.ctx, arrays);
  }

  /** How many runs there are after the staging number `from` (backward: before it; none: all); see operations/run-pages.ts. */
  async countRuns(from?: number, backward = false): Promise<number> {
    return countRuns(this.ctx, from, backward);
  }

  /** Brings fitq's index in line with what BullMQ's API did to the queue; see operations/upkeep.ts. */
  async reconcile(): Promise<ReconcileAction[]> {
    return reconcile(this.ctx);
  }

  /** Whether the namespace's queue is paused (fitq pause, or BullMQ's pause). */
  async isPaused(): Promise<boolean> {
    return isPaused(this.ctx);
  }

  /** Pauses or resumes the queue; false when it already was so. */
  async setPaused(paused: boolean): Promise<boolean> {
    return setPaused(this.ctx, paused);
  }

  /** The runs that references name and, with a filter, every run matching it; see operations/read.ts. */
  async selectRunIds(refs: readonly string[], filter?: RunFilter): Promise<string[]> {
    return selectRunIds(this.ctx, refs, filter);
  }

  /** selectRunIds, as records; see operations/read.ts. */
  async selectRunRecords(refs: readonly string[], filter?: RunFilter): Promise<RunRecord[]> {
    return selectRunRecords(this.ctx, refs, filter);
  }

  /** One run; throws UsageError for an unknown id; see operations/read.ts. */
  async getRun(runId: string): Promise<RunRecord> {
    return getRun(this.ctx, runId);
  }

  /** The run ids that references (ids or unique prefixes) name; see operations/ids.ts. */
  async resolveRunIds(refs: readonly string[]): Promise<string[]> {
    return resolveRunIds(this.ctx, refs);
  }

  /** resolveRunIds for one reference. */
  async resolveRunId(ref: string): Promise<string> {
    return resolveRunId(this.ctx, ref);
  }

  /** The array an id (or a unique prefix) names; see operations/ids.ts. */
  async resolveArrayId(ref: string): Promise<string> {
    return resolveArrayId(this.ctx, ref);
  }

  /** Runs as a read shows them (no reason judged), in the order given; an id that is no run is left out; see operations/read.ts. */
  async readRuns(ids: readonly string[]): Promise<RunRecord[]> {
    return readRuns(this.ctx, ids);
  }

  /** Cancels a run; see operations/end.ts. */
  async cancelRun(runId: string, options: { wait?: boolean; timeoutMs?: number } = {}): Promise<RunRecord> {
    return cancelRun(this.ctx, runId, options);
  }

  /** Cancels runs, each as cancelRun does, and says what happened to each; see operations/end.ts. */
  async cancelRuns(runIds: readonly string[], options: { wait?: boolean; timeoutMs?: number } = {}): Promise<CancelResult[]> {
    return cancelRuns(this.ctx, runIds, options);
  }

  /** Edits staged (and held) runs; see operations/update.ts. */
  async updateRuns(runIds: readonly string[], changes: RunChanges, options: UpdateOptions = {}): Promise<UpdateResult[]> {
    return updateRuns(this.ctx, runIds, changes, options);
  }

  /** Resolves when the run has ended; see operations/wait.ts. */
  async waitForEnd(runId: string, timeoutMs?: number): Promise<RunRecord> {
    return waitForEnd(this.ctx, runId, timeoutMs);
  }

  /** Resolves with the runs' records once every one has ended; see operations/wait.ts. */
  async waitForRuns(refs: readonly string[], options: WaitOptions = {}): Promise<RunRecord[]> {
    return waitForRuns(this.ctx, refs, options);
  }

  /** Removes runs and their logs; see operations/end.ts. */
  async removeRuns(runIds: readonly string[], options: { force?: boolean } = {}): Promise<number> {
    return removeRuns(this.ctx, runIds, options);
  }

  /** Removes ended runs now, with their logs and keys; see operations/end.ts. */
  async cleanRuns(options: CleanOptions = {}, selected?: readonly string[]): Promise<number> {
    return cleanRuns(this.ctx, options, selected);
  }

  /** The runs cleanRuns would remove now, in the order they ended; see operations/end.ts. */
  async selectCleanRuns(options: CleanOptions = {}): Promise<string[]> {
    return selectCleanRuns(this.ctx, options);
  }

  /** The namespace's notification URL (fitq notify), if set. */
  async getNotifyUrl(): Promise<string | undefined> {
    return getNotifyUrl(this.ctx);
  }

  /** Sets the namespace's notification URL (null: clears it); see operations/settings.ts. */
  async setNotifyUrl(url: string | null): Promise<boolean> {
    return setNotifyUrl(this.ctx, url);
  }

  /** The namespace's history retention. */
  async getRetention(): Promise<RetentionState> {
    return getRetention(this.ctx);
  }

  /** Changes the namespace's history retention; see operations/settings.ts. */
  async setRetention(changes: Partial<Retention>, options: { reset?: boolean } = {}): Promise<RetentionState & { removed: number }> {
    return setRetention(this.ctx, changes, options);
  }

  /** Reads a run's output from the start. */
  async readLog(runId: string): Promise<LogEntry[]> {
    return readLog(this.ctx, runId);
  }

  /** Follows a run's output until it ends; see operations/follow-log.ts. */
  async followLog(runId: string, onEntry: (entry: LogEntry) => void, signal?: AbortSignal): Promise<RunRecord> {
    return followLog(this.ctx, runId, onEntry, signal);
  }
}
