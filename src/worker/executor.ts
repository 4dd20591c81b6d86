/**
 * Executes claimed runs in this process: the claim moved the run's job to
 * active, so here it is verified (signed runs), started as a child process
 * (run-start.ts), its output stored, and its end recorded (record-end.ts),
 * fenced by the claim epoch and the registration's lease. It holds the runs
 * under way, each with its phase and, if it is being stopped, its stop
 * (run-stop.ts).
 */
import type { Logger } from 'pino';
import { activeRun, type ActiveRun, type ClaimedRun } from './active-run.js';
import type { RunMarks } from './gpu-watch.js';
import type { ExecutorContext } from './executor-context.js';
import type { RunEnding } from './run-ending.js';
import { RecentEnds } from './recent-ends.js';
import { recordRunEnd } from './record-end.js';
import { retryRefused } from './retry.js';
import { markRunning, spawnRun } from './run-start.js';
import { outOfMemoryReason } from '../model/run-usage.js';
import { recordRunningUsage } from './usage/record-usage.js';
import { CANCELED, requestStop, type RunStop } from './run-stop.js';
import { preemptRun } from './run-preemption.js';

/** The outcome of a run given up before it started (recorded as `stopped` or `canceled`, see endingToRecord). */
const NOT_STARTED: RunEnding = { status: 'failed', reason: 'not started' };

export class Executor {
  private readonly active = new Map<string, ActiveRun>();
  /** Ends recorded lately, recorded again if a failover loses them (recent-ends.ts). */
  private readonly recentEnds = new RecentEnds();
  private idleWaiters: (() => void)[] = [];
  /** Set by abandonAll: runs claimed later (their claim was on its way) are given up too. */
  private stopAll: RunStop | undefined;

  constructor(private readonly ctx: ExecutorContext) {
    if (ctx.secret) ctx.logger.info('Runs must be signed: unsigned or altered runs are rejected');
    if (ctx.userKeyOf) ctx.logger.info("Runs must be signed by their user's registered key (--require-signed): others are rejected");
  }

  get size(): number {
    return this.active.size;
  }

  /** Runs whose process has been let go and has not ended. */
  get running(): number {
    return [...this.active.values()].filter((run) => run.phase === 'running').length;
  }

  /** Runs claimed and not yet let go (being checked, their files opened, their process spawned). */
  get starting(): number {
    return [...this.active.values()].filter((run) => run.phase === 'starting').length;
  }

  runIds(): string[] {
    return [...this.active.keys()];
  }

  /** How its runs' processes are known: the tokens in their environment and their process groups, each with its run id. */
  runMarks(): RunMarks {
    const tokens = new Map<string, string>();
    const groups = new Map<number, string>();
    for (const run of this.active.values()) {
      if (run.token !== undefined) tokens.set(run.token, run.runId);
      if (run.group !== undefined) groups.set(run.group, run.runId);
    }
    return { tokens, groups };
  }

  /** Starts a freshly claimed run; resolves once it is under way (not when it ends). A run already executed here is adopted instead (see adopt). */
  dispatch(claim: ClaimedRun): void {
    if (this.adopt(claim)) return;
    const run = activeRun(claim);
    this.active.set(claim.runId, run);
    void this.execute(run).catch(async (error: unknown) => {
      // fitq's failure, not the run's: it ends stopped (re-staged per its retries, else lost).
      requestStop(run, { cause: 'abandon', reason: `the worker could not run it: ${(error as Error).message}` });
      // Its capacity goes back only once its process is gone.
      run.process?.terminate(this.ctx.killGraceMs);
      await run.process?.outcome.catch(() => {});
      await this.record(run, NOT_STARTED);
    });
  }

  /** The claim epoch of a run being executed here; undefined if it is not. */
  epochOf(runId: string): string | undefined {
    return this.active.get(runId)?.epoch;
  }

  /** The user a run here was staged by, as its signed fields say. */
  userOf(runId: string): string | undefined {
    return this.active.get(runId)?.fields.user;
  }

  /** Whether the run is being executed (or recorded) here. */
  has(runId: string): boolean {
    return this.active.has(runId);
  }

  /**
   * Records again the end of a run Redis holds as running here though its
   * end was recorded (a failover lost that write); undefined when no such
   * end is remembered for this claim of the run, else settles once the end
   * is recorded again (or could not be).
   */
  recordEndAgain(runId: string, epoch: string): Promise<void> | undefined {
    const input = this.recentEnds.take(runId, epoch);
    if (!input || this.active.has(runId)) return undefined;
    const log = this.ctx.logger.child({ runId });
    log.warn(`Run ${runId} ended here, but Redis no longer has its end (a failover to a replica that had not received it): recording it again`);
    return retryRefused(() => this.ctx.scripts.finishRun(input), { givenUp: this.ctx.givenUp, onRetry: () => undefined }).then(
      (result) => log.info(`Run ${runId}: its end recorded again (${result.outcome === 'recorded' ? result.status : result.outcome})`),
      (error: Error) => log.error({ err: error }, `Run ${runId}: its end could not be recorded again: ${error.message}`),
    );
  }

  /**
   * Runs executed here that Redis, by a heartbeat's `held`, does not hold
   * for this worker under their claim's epoch: their claim was lost (a
   * failover) or removed. Runs whose end is being recorded are not among them.
   */
  unheld(held: readonly { runId: string; epoch: string }[]): ActiveRun[] {
    const epochs = new Map(held.map(({ runId, epoch }) => [runId, epoch]));
    return [...this.active.values()].filter((run) => run.phase !== 'ending' && epochs.get(run.runId) !== run.epoch);
  }

  /** Stops a run this worker may no longer run, for `reason` (it ends stopped, if its claim still stands). */
  giveUp(runId: string, reason: string): void {
    const run = this.active.get(runId);
    if (!run) return;
    requestStop(run, { cause: 'abandon', reason });
    run.process?.terminate(this.ctx.killGraceMs);
  }

  /**
   * Takes a new claim of a run already executed here (its earlier claim was
   * lost in a failover, and this worker claimed the run anew): the process
   * runs on under the new claim, unless the claim placed it on other GPU
   * devices than it runs on, when it is stopped (it ends stopped under the
   * new claim). A run whose end is being recorded waits for that end: once
   * it is recorded (the run staged again by a retry, whose claim came in
   * the same breath as its end's reply) the run starts anew under the new
   * claim; one whose end was refused (a
   * failover lost the claim it ran on, and this worker claimed it anew) is
   * not started again: its end is recorded under the new claim (record()).
   * False when the run is not executed here.
   */
  adopt(claim: ClaimedRun): boolean {
    const run = this.active.get(claim.runId);
    if (!run) return false;
    const log = this.runLog(run);
    if (run.phase === 'ending') {
      // Its process is gone and its end on its way: the new claim waits for that end (record()).
      if (claim.epoch !== run.epoch) run.claimedAgain = claim;
      return true;
    }
    const sameDevices = claim.devices.join(',') === run.devices.join(',');
    Object.assign(run, {
      epoch: claim.epoch, fields: claim.fields, reserved: claim.reserved, pooled: claim.pooled, devices: claim.devices,
      deviceShare: claim.deviceShare, deadline: claim.deadline,
    });
    if (sameDevices) {
      log.warn(`Run ${claim.runId} was claimed again by this worker, which already runs it (a failover lost its claim): it runs on under the new claim`);
    } else {
      log.warn(`Run ${claim.runId} was claimed again by this worker on other GPU devices than it runs on (a failover lost its claim): stopping it`);
      this.giveUp(claim.runId, `its claim was lost in a Redis failover, and its worker claimed it again on other GPU devices (${claim.devices.join(',')}) than it ran on`);
    }
    return true;
  }

  /**
   * Records a claimed run this worker will not run, as stopped by fitq
   * (re-staged per its retries, else lost) for `reason`.
   */
  giveBack(claim: ClaimedRun, reason: string): void {
    if (this.active.has(claim.runId)) return;
    const run = activeRun(claim);
    requestStop(run, { cause: 'abandon', reason });
    this.active.set(claim.runId, run);
    void this.record(run, NOT_STARTED);
  }

  /**
   * Preempts a run for `forRun` (a claim chose it): see run-preemption.ts.
   * False when the run is not one this worker runs, or is stopping already.
   */
  preempt(runId: string, forRun: string): boolean {
    const run = this.active.get(runId);
    if (!run || run.stop !== undefined || run.phase === 'ending') return false;
    preemptRun(this.ctx, run, forRun, this.runLog(run));
    return true;
  }

  /** Stops a run (SIGTERM, SIGKILL after the grace period); it ends as canceled. */
  cancel(runId: string): boolean {
    const run = this.active.get(runId);
    if (!run) return false;
    requestStop(run, CANCELED);
    run.process?.terminate(this.ctx.killGraceMs);
    return true;
  }

  /**
   * Terminates every run and keeps runs not yet started from starting, e.g.
   * on a second stop signal (`worker-stop`) or when the worker was fenced
   * (`abandon`), runs handed over later included. Its reason is recorded for
   * them (they end lost or are re-staged, never failed).
   */
  abandonAll(stop: RunStop & { cause: 'abandon' | 'worker-stop' }): void {
    this.stopAll ??= stop;
    for (const run of this.active.values()) {
      requestStop(run, stop);
      run.process?.terminate(this.ctx.killGraceMs);
    }
  }

  /**
   * Kills (SIGKILL) the process group of every run still running, and
   * resolves once they have exited (or after `waitMs`) with how many were
   * killed and how many had still not exited: the last resort before the
   * worker gives their capacity back.
   */
  async killAll(waitMs: number): Promise<{ killed: number; survivors: number }> {
    const killed = [...this.active.values()].flatMap((run) => (run.process?.kill() ? [run.process.outcome] : []));
    let exited = 0;
    if (killed.length > 0) {
      const counted = killed.map((outcome) => outcome.finally(() => (exited += 1)));
      await Promise.race([Promise.allSettled(counted), new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
    }
    return { killed: killed.length, survivors: killed.length - exited };
  }

  /** Resolves when no run is active. */
  whenIdle(): Promise<void> {
    if (this.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async execute(run: ActiveRun): Promise<void> {
    const log = this.runLog(run);
    if (this.stopAll !== undefined) requestStop(run, this.stopAll);
    // Its claim confirmed by the replicas asked for (--redis-wait-replicas), so no failover can lose it once it runs.
    if (run.stop === undefined && this.ctx.replicas) await this.ctx.replicas.confirmClaim(run, log);
    if (run.stop !== undefined) {
      await this.record(run, NOT_STARTED);
      return;
    }
    const spawned = await spawnRun(this.ctx, run, log);
    if (!('process' in spawned)) {
      await this.record(run, spawned);
      return;
    }
    // Canceled or given up while its files were being opened: what cancel() or abandonAll() would have done.
    if (run.stop !== undefined) spawned.process.terminate(this.ctx.killGraceMs);
    // Known once the spawn helper's watchdog has it and the command runs.
    const group = await spawned.process.group;
    if (group !== undefined) markRunning(this.ctx, run, spawned, group, log);
    let outcome: RunEnding = await spawned.process.outcome;
    // Its worker lost sight of it (its spawn helper died, its group was killed): not the run's doing.
    if (outcome.lostBy !== undefined) requestStop(run, { cause: 'abandon', reason: `its worker ${this.ctx.workerName} ${outcome.lostBy}` });
    // Not the run's doing: it goes back to staged, and the worker claims nothing for a while.
    if (outcome.status === 'returned') {
      outcome = { ...outcome, reason: `its worker ${this.ctx.workerName} ${outcome.reason}` };
      this.ctx.onShortage?.(outcome.reason);
    }
    run.disarmLimit?.();
    // Its group is gone; what escaped it (setsid daemons) goes too, while its end is recorded.
    const since = spawned.process.pid === undefined ? undefined : { pid: spawned.process.pid, atMs: spawned.spawnedAtMs };
    void this.ctx.sweep.sweep(spawned.token, since).then((pids) => {
      if (pids.length > 0) log.info({ pids }, `Killed ${pids.length} process(es) run ${run.runId} left behind (${pids.join(', ')})`);
    });
    await spawned.output.flush();
    await this.record(run, outcome);
  }

  /** The run's logger, made once per run. */
  private runLog(run: ActiveRun): Logger {
    run.log ??= this.ctx.logger.child({ runId: run.runId });
    return run.log;
  }

  /** Records what the runs running here have used so far, under registration `token` (at each heartbeat). */
  recordUsage(token: string): Promise<void> {
    return recordRunningUsage(this.ctx, this.active, token);
  }

  /** Records the end of a run, then lets it go: the executor holds it no more. */
  private async record(run: ActiveRun, ended: RunEnding): Promise<void> {
    run.phase = 'ending';
    // What it used in all (its cgroup, if any, removed with whatever escaped into it).
    run.usage ??= await this.ctx.usage.finish(run.runId);
    // Its memory limit's doing, not its own: say so.
    const outOfMemory = run.usage?.oomKills !== undefined && ended.status === 'failed' && run.stop === undefined;
    const outcome = outOfMemory ? { ...ended, reason: outOfMemoryReason(run.usage!) } : ended;
    const recorded = await recordRunEnd(this.ctx, run, outcome, this.runLog(run));
    if (recorded) this.recentEnds.remember(recorded.input);
    this.active.delete(run.runId);
    const again = run.claimedAgain;
    run.claimedAgain = undefined;
    if (again && recorded !== undefined) {
      // Its end recorded, it went back to staged (a retry, a restart) and this worker claimed it at once: a run like any other.
      this.dispatch(again);
    } else if (again && recorded === undefined) {
      // Its end refused: a failover lost the claim it ran on, and this worker claimed it anew. Its true end goes under the new claim.
      this.runLog(run).warn(
        `Run ${run.runId} was claimed again by this worker as its end was being recorded (a failover lost its claim): its end is recorded under the new claim`,
      );
      Object.assign(run, { epoch: again.epoch, fields: again.fields, reserved: again.reserved, pooled: again.pooled, devices: again.devices, deviceShare: again.deviceShare });
      this.active.set(run.runId, run);
      await this.record(run, outcome);
      return;
    }
    if (this.active.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      waiters.forEach((resolve) => resolve());
    }
    this.ctx.onRunEnded();
  }
}
