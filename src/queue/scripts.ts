/**
 * The Lua scripts, one per atomic operation, and one typed wrapper each. No
 * other module talks to Redis with EVAL: every decision about who runs what
 * and every change to capacity happens in these scripts.
 */
import type { ChainableCommander } from 'ioredis';
import type { RedisConnection } from '../redis/connection.js';
import { parseExplainReply, type RunVerdict } from '../model/explain.js';
import type { NamespaceKeys } from './keys.js';
import type { LogLine, LogPosition } from '../model/logs.js';
import { scriptCommand, defineScripts, scriptKeys, type KeySubject, type ScriptArg } from './script-call.js';
import { parseMetricsReply, parseStatusCountsReply, type MetricsSnapshot } from '../model/metrics-snapshot.js';
import {
  flatToRecord,
  limitArg,
  parseClaimReply,
  parseReclaimReply,
  parsePreempting,
  type Preempting,
  type ClaimLimits,
  type ClaimPolicy,
  type ClaimResult,
  type GpuPlacement,
  type ReclaimResult,
} from './claim-reply.js';
import type { ClaimedRun } from '../model/claimed-run.js';
import type { FinishInput, FinishResult, StopMode, WorkerRegistration } from './worker-calls.js';
import {
  parseHeldOutcome,
  parseReconcileAction,
  parseRestartOutcome,
  parseStageReply,
  parseUpdateOutcome,
  type BatchChunk,
  type HeldOutcome,
  type ReconcileAction,
  type RestartOutcome,
  type StagedBatch,
  type StageScriptRun,
  type UpdateScriptOutcome,
  type UpdateScriptRun,
} from './run-calls.js';
import { acceptReply, codeName, type ScriptCode } from './script-codes.js';
import { REAP_BATCH, RECONCILE_BUDGET } from './upkeep-budgets.js';
import type { Stager } from '../model/stager.js';
import { parseFairShareReply, type FairShareOp, type FairShareState } from '../model/fair-share.js';

const CANCEL_OUTCOMES = new Map<ScriptCode, 'canceled' | 'requested' | 'ended' | 'unknown'>([
  ['ok', 'canceled'], ['requested', 'requested'], ['unchanged', 'ended'], ['unknownRun', 'unknown'],
]);

/** Typed calls of the scripts for one namespace. */
export class Scripts {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: NamespaceKeys,
    private readonly logMaxLines: number,
  ) {
    defineScripts(redis);
  }

  /** Calls a script: its KEYS as its top names them (see scriptKeys), then `args`, its ARGV. */
  private call(name: string, subject: KeySubject, ...args: ScriptArg[]): Promise<unknown> {
    return scriptCommand(this.redis, name)([...scriptKeys(this.keys, name, subject), ...args].flat());
  }

  /**
   * Stages runs in one script call. Returns the staging sequence number of
   * the first run (the others follow on) and the time they were staged;
   * throws a RefusedError for a taken id. With `batch`, the runs are a
   * chunk of that batch, hidden from fitq's readers until commitBatch
   * (see stageRuns-*.lua). With a pipeline (MULTI), only queues the call.
   * `stager`: who stages them and from where, recorded on each (none: not recorded).
   */
  async stageRuns(runs: StageScriptRun[], pipeline?: ChainableCommander, batch?: BatchChunk, stager?: Stager): Promise<StagedBatch | undefined> {
    const total = batch?.total ?? runs.length;
    const args: (string | number)[] = [this.keys.base, batch?.id ?? '', batch?.ttlMs ?? 0, batch?.first ? 1 : 0, stager?.user ?? '', stager?.host ?? '', total, runs.length];
    for (const run of runs) args.push(run.id, run.shape, run.priority, run.data, run.array ?? '', run.limit ?? '');
    const keys = scriptKeys(this.keys, 'stageRuns');
    if (pipeline) {
      void scriptCommand(pipeline, 'stageRuns')([...keys, ...args]);
      return undefined;
    }
    return parseStageReply(await scriptCommand(this.redis, 'stageRuns')([...keys, ...args]), this.keys);
  }

  /** Commits a batch staged in chunks: its runs are there for every reader at once. A batch no longer open is refused (RefusedError). */
  async commitBatch(batch: string): Promise<number> {
    const [code, value] = (await this.call('commitBatch', {}, this.keys.base, batch)) as [number, number];
    acceptReply(code, value, this.keys);
    return Number(value);
  }

  /** Takes a committed batch's id out of those of `runIds` that still carry it (settleBatch-1.lua). Returns how many. */
  async settleBatch(batch: string, runIds: string[]): Promise<number> {
    const [, count] = (await this.call('settleBatch', {}, this.keys.base, batch, runIds)) as [number, number];
    return Number(count);
  }

  /** Removes the runs of an uncommitted batch among `runIds` (with `last`, ends the batch). Returns how many. */
  async abortBatch(batch: string, runIds: string[], last: boolean): Promise<number> {
    const [, count] = (await this.call('abortBatch', {}, this.keys.base, batch, last ? 1 : 0, runIds)) as [number, number];
    return Number(count);
  }

  async claimRun(
    worker: string,
    token: string,
    maxRuns: number,
    policy: ClaimPolicy = 'backfill',
    gpuPlacement: GpuPlacement = 'pack',
    timeLimits: ClaimLimits = {},
    /** Most runs at once that demand nothing (0 = no limit): capacity bounds the others. */
    maxBare = 0,
  ): Promise<ClaimResult> {
    const reply = (await this.call(
      'claimRun', { worker }, this.keys.base, token, maxRuns, policy, gpuPlacement,
      limitArg(timeLimits.defaultMs), limitArg(timeLimits.maxMs), maxBare,
    )) as unknown[];
    return parseClaimReply(reply);
  }

  /**
   * Takes back a claim a failover lost (the worker started the run on it,
   * the new master never had it), as it was, if the run is still staged and
   * what it reserved still free (see reclaimRun-*.lua); else the run moved
   * on without it, which its history records.
   */
  async reclaimRun(worker: string, token: string, claim: ClaimedRun): Promise<ReclaimResult> {
    const { fields } = claim;
    const reply = (await this.call(
      'reclaimRun', { worker }, this.keys.base, token, claim.runId, claim.epoch, fields.reserved ?? '', fields.pooled ?? '',
      fields.devices ?? '', fields.deviceShare ?? '', fields.runLimit ?? '', fields.deadline ?? '', fields.processedOn ?? '',
    )) as unknown[];
    return parseReclaimReply(reply);
  }

  /**
   * Why runs wait, judged by the claim's own policy for every live worker
   * (see explainRuns-*.lua): a verdict per staged run id, then per shape of
   * a run about to be staged (judged after every staged run); undefined for
   * a run that is not staged. Reads only.
   */
  async explainRuns(runIds: readonly string[], shapes: readonly string[] = []): Promise<(RunVerdict | undefined)[]> {
    const reply = await this.call('explainRuns', {}, this.keys.base, runIds.length, runIds, shapes.length, shapes);
    return parseExplainReply(reply);
  }

  /** What /metrics shows of the namespace, read in one step (see readMetrics-*.lua), counting the runs of at most `mostShapes` shapes. Reads only. */
  async readMetrics(mostShapes: number): Promise<MetricsSnapshot> {
    const reply = await this.call('readMetrics', {}, this.keys.base, mostShapes);
    return parseMetricsReply(reply);
  }

  /**
   * Runs by status among `count` members of waiting-children (`parked`:
   * held or staged) or of failed (`ended`: each ended status but completed),
   * from position `from` (see countRunStatuses-*.lua); `read` fewer than
   * `count`: the state's end. Reads only.
   */
  async countRunStatuses(state: 'parked' | 'ended', from: number, count: number): Promise<{ counts: Map<string, number>; read: number }> {
    return parseStatusCountsReply(await this.call('countRunStatuses', {}, this.keys.base, state, from, count));
  }

  /**
   * Appends output lines of a run, unless the claim that produced them has
   * moved on or its worker no longer holds its lease; returns lines written.
   * With `position`, each line is stored with its number among the lines of
   * its attempt (see LogPosition).
   */
  async appendLog(runId: string, worker: string, token: string, epoch: string, lines: readonly LogLine[], position?: LogPosition): Promise<number> {
    const args: string[] = [];
    for (const { stream, line } of lines) args.push(stream, line);
    const reply = await this.call(
      'appendLog', { runId, worker }, worker, token, epoch, this.logMaxLines, position?.first ?? '', position?.slow ?? 0, position?.refused ?? 0, args,
    );
    return Number(reply);
  }

  /**
   * Drops the hold a (stopping) worker has on its blocked head; only for the
   * registration under `token`. Returns whether a hold was dropped.
   */
  async dropHold(worker: string, token: string): Promise<boolean> {
    return codeName(await this.call('dropHold', { worker }, token)) === 'ok';
  }

  /** Pauses or resumes the namespace's queue; false when it already was so. */
  async setPaused(paused: boolean): Promise<boolean> {
    const reply = await this.call('setPaused', {}, this.keys.base, paused ? 'pause' : 'resume');
    return codeName(reply) === 'ok';
  }

  /** Sets pool capacities ("set"), or removes pool resources ("remove"; a name not in the pool is refused). */
  async setPool(action: 'set' | 'remove', args: string[]): Promise<void> {
    const [code, value] = (await this.call('setPool', {}, this.keys.base, action, args)) as [number, string?];
    acceptReply(code, value, this.keys);
  }

  /** Sets (merges) or removes a user's quota fields (model/quota.ts); remove: false when nothing was there. */
  async setQuota(user: string, action: 'set' | 'remove', fields: string[]): Promise<boolean> {
    return codeName(await this.call('setQuota', {}, this.keys.base, user, action, fields)) === 'ok';
  }

  /** Changes fair share: ops as setFairShare-2.lua takes them (model/fair-share.ts builds them). */
  async setFairShare(ops: readonly FairShareOp[]): Promise<void> {
    await this.call('setFairShare', {}, this.keys.base, ops.flatMap((op) => [op.op, op.field, op.value ?? '']));
  }

  /** Fair share as the claim sees it now. */
  async readFairShare(): Promise<FairShareState> {
    return parseFairShareReply(await this.call('readFairShare', {}, this.keys.base));
  }

  /** Registers (add: replaced another key?) or removes a user's public key; remove: undefined when there was none. */
  async setUserKey(user: string, action: 'add' | 'remove', key = ''): Promise<boolean | undefined> {
    const [code, replaced] = (await this.call('setUserKey', {}, user, action, key)) as [number, number?];
    return codeName(code) === 'ok' ? replaced === 1 : undefined;
  }

  /** Records a run's end (the Redis server's clock), only for the current claim of a live registration; see FinishResult. */
  async finishRun(input: FinishInput): Promise<FinishResult> {
    const [code, status] = (await this.call(
      'finishRun', { runId: input.runId, worker: input.worker }, this.keys.base, input.runId, input.worker, input.token, input.epoch, input.status,
      input.exitCode ?? '', input.signal ?? '', input.reason, this.logMaxLines, input.usage ?? '',
    )) as [number, string];
    const outcome = codeName(code);
    if (outcome === 'ok') return { outcome: 'recorded', status: status as Extract<FinishResult, { outcome: 'recorded' }>['status'] };
    if (outcome === 'unchanged') return { outcome: 'movedOn', status: status || undefined };
    return { outcome: 'fenced' };
  }

  /**
   * Registers a worker; false when a live worker holds the name. Leases use
   * the Redis server's clock. A namespace of an older fitq is refused (RefusedError).
   */
  async registerWorker(input: WorkerRegistration): Promise<boolean> {
    const reply = await this.call(
      'registerWorker', { worker: input.name }, this.keys.base, input.name, input.token, input.policy ?? 'backfill', input.leaseMs, input.concurrency,
      input.host, input.pid, input.resources, this.logMaxLines, (input.devices ?? []).join(','),
      input.gpuPlacement ?? 'pack', limitArg(input.timeLimits?.defaultMs), limitArg(input.timeLimits?.maxMs), input.drained ? '1' : '',
      input.gpuProbeStaleMs ? input.gpuProbeStaleMs : '', (input.migDevices ?? []).join(','),
    );
    // A live worker holding the name is the caller's to explain (a start, or a re-registration).
    if (codeName(reply) === 'workerNameTaken') return false;
    return acceptReply(reply, input.name, this.keys) === 'ok';
  }

  /**
   * Records what a worker's running runs used so far: run id -> its claim's
   * epoch and its usage (encodeRunUsage). Resolves with how many were
   * recorded; false when the worker is fenced (nothing recorded).
   */
  async recordUsage(name: string, token: string, usages: readonly { runId: string; epoch: string; usage: string }[]): Promise<number | false> {
    const triples = usages.flatMap(({ runId, epoch, usage }) => [runId, epoch, usage]);
    const [code, recorded] = (await this.call('recordUsage', { worker: name }, this.keys.base, name, token, usages.length, triples)) as [number, number];
    return codeName(code) === 'fenced' ? false : recorded;
  }

  /**
   * Records a worker's GPU probe: each device's reading (src/gpu/device-reading.ts),
   * replacing the last. False when the worker is fenced (nothing recorded).
   */
  async recordGpuProbe(name: string, token: string, readings: ReadonlyMap<number, string>): Promise<boolean> {
    const pairs = [...readings].flatMap(([index, reading]) => [String(index), reading]);
    const reply = await this.call('recordGpuProbe', { worker: name }, this.keys.base, name, token, readings.size, pairs);
    return codeName(reply) === 'ok';
  }

  /**
   * Renews a lease; returns run ids whose cancellation is pending, any stop
   * request, the runs (with their claim epoch) Redis holds for the worker,
   * whether it is drained, and its runs a claim preempted; undefined when fenced.
   */
  async heartbeat(
    name: string,
    token: string,
    leaseMs: number,
  ): Promise<{ cancels: string[]; stop?: StopMode; held: { runId: string; epoch: string }[]; drained: boolean; preempting: Preempting[] } | undefined> {
    const reply = (await this.call('heartbeat', { worker: name }, this.keys.base, name, token, leaseMs)) as [number, string[]?, string?, string[]?, number?, string[]?];
    if (codeName(reply[0]) !== 'ok') return undefined;
    const stop = reply[2];
    const flat = reply[3] ?? [];
    const held: { runId: string; epoch: string }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) held.push({ runId: flat[i]!, epoch: flat[i + 1]! });
    return {
      cancels: reply[1] ?? [],
      held,
      drained: reply[4] === 1,
      preempting: parsePreempting(reply[5]),
      ...(stop === 'graceful' || stop === 'now' ? { stop } : {}),
    };
  }

  /**
   * At the end of a preempted run's grace: whether its worker stops it
   * (`stop`: the run it makes room for still waits, or Redis says nothing
   * of the preemption) or it runs on (`keep`: that run no longer waits; the
   * preemption was dropped).
   */
  async checkPreemption(name: string, token: string, runId: string, epoch: string): Promise<'stop' | 'keep'> {
    const [code, verdict] = (await this.call('checkPreemption', { worker: name }, this.keys.base, name, token, runId, epoch)) as [number, string?];
    return codeName(code) === 'ok' && verdict === 'keep' ? 'keep' : 'stop';
  }

  /**
   * Drains a live worker (it claims nothing more; its hold is dropped) or
   * undrains it; undefined when no live worker has the name, else whether
   * it changed.
   */
  async setDrained(name: string, drained: boolean): Promise<boolean | undefined> {
    const [code, changed] = (await this.call('setDrained', { worker: name }, this.keys.base, name, drained ? 'drain' : 'undrain')) as [number, number?];
    return codeName(code) === 'ok' ? changed === 1 : undefined;
  }

  /** Asks a live worker to stop; false when no live worker has the name. */
  async requestStop(name: string, mode: StopMode): Promise<boolean> {
    return codeName(await this.call('requestStop', { worker: name }, this.keys.base, name, mode)) === 'ok';
  }

  /** Reaps expired workers; returns them and how long until the next lease runs out (if any). */
  async reapWorkers(limit = REAP_BATCH): Promise<{ reaped: string[]; msUntilNext: number | undefined }> {
    const [reaped, next] = (await this.call('reapWorkers', {}, this.keys.base, limit, this.logMaxLines)) as [string[], string | number];
    const msUntilNext = Number(next);
    return { reaped, msUntilNext: msUntilNext < 0 ? undefined : msUntilNext };
  }

  async deregisterWorker(name: string, token: string): Promise<boolean> {
    const reply = await this.call('deregisterWorker', { worker: name }, this.keys.base, name, token, this.logMaxLines);
    return codeName(reply) === 'ok';
  }

  /** Cancels a run; see cancelRun-*.lua for the outcomes. */
  async cancelRun(runId: string): Promise<{ outcome: 'canceled' | 'requested' | 'ended' | 'unknown'; status: string }> {
    const [code, status] = (await this.call('cancelRun', { runId }, this.keys.base, runId, this.logMaxLines)) as [number, string];
    const outcome = CANCEL_OUTCOMES.get(codeName(code));
    if (outcome === undefined) throw new Error(`cancelRun replied ${code}`);
    return { outcome, status };
  }

  /**
   * Puts the next `most` runs of `ids` after `position` (an id; "" from the
   * start) in the order index, as an older fitq staged them; returns the
   * last id looked at, "" at the end (see indexRunOrder-*.lua).
   */
  async indexRunOrder(position: string, most: number): Promise<string> {
    return String(await this.call('indexRunOrder', {}, this.keys.base, position, most));
  }

  /**
   * For each reference, the run it names in full, else the runs it is a
   * prefix of (at most `most` + 1); see resolveRunIds-*.lua.
   */
  async resolveRunIds(refs: readonly string[], most: number): Promise<string[][]> {
    return (await this.call('resolveRunIds', {}, this.keys.base, most, refs)) as string[][];
  }

  /**
   * Removes the named runs that have ended with one of `statuses`, no later
   * than `latestFinishedOn` (if given); leaves any other. Returns how many it removed.
   */
  async cleanRuns(statuses: readonly string[], latestFinishedOn: number | undefined, runIds: readonly string[]): Promise<number> {
    return Number(await this.call('cleanRuns', {}, this.keys.base, statuses.join(','), latestFinishedOn ?? '', runIds));
  }

  /** Writes retention settings (value "" = back to the default); returns the settings hash as stored now. */
  async setRetention(values: readonly (readonly [string, string])[]): Promise<Record<string, string>> {
    const flat = (await this.call('setRetention', {}, this.keys.base, values.flat())) as string[];
    return flatToRecord(flat);
  }

  /** Sets (or, with "", clears) the namespace's notification URL; whether it changed. */
  async setNotify(url: string): Promise<boolean> {
    return codeName(await this.call('setNotify', {}, this.keys.base, url)) === 'ok';
  }

  /**
   * Reconciles fitq's index with what BullMQ's API did to the queue, about
   * `budget` jobs and events per call; `more` when work is left for another
   * call.
   */
  async reconcileRuns(budget = RECONCILE_BUDGET): Promise<{ more: boolean; actions: ReconcileAction[] }> {
    const [more, actions] = (await this.call('reconcileRuns', {}, this.keys.base, budget, this.logMaxLines)) as [number, string[]];
    return { more: more === 1, actions: actions.map(parseReconcileAction) };
  }

  /** Edits staged or held runs in one script call; an outcome per run, in order (see updateRuns-*.lua). */
  async updateRuns(runs: readonly UpdateScriptRun[]): Promise<UpdateScriptOutcome[]> {
    const args: (string | number)[] = [this.keys.base, runs.length];
    for (const run of runs) args.push(run.id, run.expectedData, run.data, run.shape, run.priority, run.changes);
    return ((await this.call('updateRuns', {}, args)) as string[]).map(parseUpdateOutcome);
  }

  /** Holds staged runs, or releases held ones; one outcome per id, in order. */
  async setHeld(mode: 'hold' | 'release', runIds: readonly string[]): Promise<HeldOutcome[]> {
    return ((await this.call('setHeld', {}, this.keys.base, mode, runIds)) as string[]).map(parseHeldOutcome);
  }

  /** Stages ended runs again (with `cascade`, the dependents canceled for them too); one outcome per id, then the cascade's. */
  async restartRuns(runIds: readonly string[], cascade: boolean): Promise<RestartOutcome[]> {
    return ((await this.call('restartRuns', {}, this.keys.base, cascade ? 1 : 0, this.logMaxLines, runIds)) as string[]).map(parseRestartOutcome);
  }

  /** Removes runs, all or none: an unknown or running one is refused (RefusedError). Returns how many. */
  async removeRuns(runIds: string[]): Promise<number> {
    const [code, value] = (await this.call('removeRuns', {}, this.keys.base, runIds)) as [number, string | number];
    acceptReply(code, value, this.keys);
    return Number(value);
  }
}
