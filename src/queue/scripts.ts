/**
 * The Lua scripts, one per atomic operation, and one typed wrapper each. No
 * other module talks to Redis with EVAL: every decision about who runs what
 * and every change to capacity happens in these scripts. The calls are
 * grouped by concern: this class (staging, the runs' own), its bases
 * worker-scripts.ts (the workers') and settings-scripts.ts (the
 * namespace's settings), over script-caller.ts.
 */
import type { ChainableCommander } from 'ioredis';
import { parseExplainReply, type RunVerdict } from '../model/explain.js';
import { parseMetricsReply, parseStatusCountsReply, type MetricsSnapshot } from '../model/metrics-snapshot.js';
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
import { acceptReply, codeName, notYoursOf, type ScriptCode } from './script-codes.js';
import { RECONCILE_BUDGET } from './upkeep-budgets.js';
import { scriptCommand, scriptKeys } from './script-call.js';
import type { Stager } from '../model/stager.js';
import { WorkerScripts } from './worker-scripts.js';

const CANCEL_OUTCOMES = new Map<ScriptCode, 'canceled' | 'requested' | 'ended' | 'unknown'>([
  ['ok', 'canceled'], ['requested', 'requested'], ['unchanged', 'ended'], ['unknownRun', 'unknown'],
]);

/** Typed calls of the scripts for one namespace: staging and the runs' own (the workers' and the settings' are its bases). */
export class Scripts extends WorkerScripts {
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
   * Cancels a run, at `request` (operations/requests.ts); see cancelRun-*.lua
   * for the outcomes. `status`: how an ended run ended; the user of a run
   * refused (notYours).
   */
  async cancelRun(runId: string, request = ''): Promise<{ outcome: 'canceled' | 'requested' | 'ended' | 'unknown' | 'notYours'; status: string }> {
    const [code, status] = (await this.call('cancelRun', { runId }, this.keys.base, runId, this.logMaxLines, request)) as [number, string];
    if (codeName(code) === 'notYours') return { outcome: 'notYours', status: notYoursOf(status).owner };
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
    for (const run of runs) args.push(run.id, run.expectedData, run.data, run.shape, run.priority, run.changes, run.request ?? '');
    return ((await this.call('updateRuns', {}, args)) as string[]).map(parseUpdateOutcome);
  }

  /** Holds staged runs, or releases held ones; one outcome per id, in order. */
  async setHeld(mode: 'hold' | 'release', runs: readonly (readonly [runId: string, request: string])[]): Promise<HeldOutcome[]> {
    return ((await this.call('setHeld', {}, this.keys.base, mode, runs.flat())) as string[]).map(parseHeldOutcome);
  }

  /** Stages ended runs again (with `cascade`, the dependents canceled for them too); one outcome per id, then the cascade's. */
  async restartRuns(runs: readonly (readonly [runId: string, request: string])[], cascade: boolean): Promise<RestartOutcome[]> {
    return ((await this.call('restartRuns', {}, this.keys.base, cascade ? 1 : 0, this.logMaxLines, runs.flat())) as string[]).map(parseRestartOutcome);
  }

  /** Removes runs, all or none: an unknown or running one, or another user's signed one, is refused (RefusedError). Returns how many. */
  async removeRuns(runs: readonly (readonly [runId: string, request: string])[]): Promise<number> {
    const [code, value] = (await this.call('removeRuns', {}, this.keys.base, runs.flat())) as [number, string | number];
    acceptReply(code, value, this.keys);
    return Number(value);
  }
}
