/**
 * Executes claimed runs in this process: the claim moved the run's job to
 * active, so here it is verified (signed runs), started as a child process,
 * its output stored, and its end recorded, fenced by the claim epoch and the
 * registration's lease.
 */
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import type { ClaimedRun } from '../model/claimed-run.js';
import { formatDemands } from '../model/run-data.js';
import { arrayOfLimit } from '../model/array-limit.js';
import type { Resources } from '../resources/spec.js';
import type { ClaimLimits, FinishResult, Scripts } from '../queue/scripts.js';
import { armTimeLimit, runTimeLimit } from './time-limit.js';
import { formatTimeLimit } from '../units/duration.js';
import { claimMismatch } from '../security/claim-check.js';
import { verifyRun } from '../security/signing.js';
import { startRunProcess, type RunProcess } from './child.js';
import { OutputBuffer } from './output.js';
import { newRunToken, RUN_TOKEN_VARIABLE, type EscapedSweep } from './escaped-sweep.js';
import { retryRefused } from './retry.js';
import { grantedResourcesEnv } from './run-env.js';
import { endingMessage, endingToRecord, type RunEnding } from './run-ending.js';
import type { LogFormat } from './logger.js';
import type { Watchdog } from './watchdog.js';

export type { ClaimedRun };

interface ActiveRun extends ClaimedRun {
  process?: RunProcess;
  cancelRequested: boolean;
  /** Why the run must stop (or not start at all): the worker is stopping or was fenced. */
  abandoned?: string;
  /** When its process was let go (performance.now()). */
  startedAtMs?: number;
  /** Its log lines carry its id. */
  log?: Logger;
  /** Its end is being recorded (its process is gone). */
  ending?: boolean;
  /** Set when it ran past its time limit and was terminated for it: the reason recorded (it ends `timeout`). */
  timedOut?: string;
  /** Disarms its time limit (see time-limit.ts) when it ends. */
  disarmLimit?: () => void;
}

/** Why a run Redis no longer holds for its worker is stopped. */
const NOT_HELD = 'Redis no longer holds it for its worker (its claim was lost or removed)';

export interface ExecutorContext {
  keys: NamespaceKeys;
  scripts: Scripts;
  watchdog: Watchdog;
  logger: Logger;
  workerName: string;
  /** The token of the registration this executor runs for: its writes are refused once that is gone. */
  token: string;
  killGraceMs: number;
  /** The worker's time limits, for runs staged without one. */
  timeLimits: ClaimLimits;
  logMaxLines: number;
  echoOutput: boolean;
  logFormat: LogFormat;
  /** Called after a run has ended and been recorded. */
  onRunEnded: () => void;
  /** Called when a run's process has been let go. */
  onRunStarted?: () => void;
  /** Called when a run could not start because this worker ran out of something of its own (see shortage.ts), with why. */
  onShortage?: (reason: string) => void;
  /** Called once a run's end is recorded and it ended (not re-staged), with its fields as claimed (notifications). */
  onRunRecorded?: (runId: string, fields: Readonly<Record<string, string>>, status: string) => void;
  /**
   * Whether to stop retrying writes Redis refused (a run's end, its output):
   * the worker has let go of its lease, so nothing it writes can land.
   */
  givenUp: () => boolean;
  /**
   * Shared secret: runs not signed with it end `rejected` without starting.
   * Without one, every run runs (signed or not).
   */
  secret?: Buffer | undefined;
  /** The worker's environment as its runs inherit it (see run-env.ts), read once (reading process.env is slow). */
  inheritedEnv: Record<string, string>;
  /** Start runs under the keeper that kills what escapes their process group (see subreaper.ts). */
  reapEscaped: boolean;
  /** Kills what a run left behind once its main process has exited, found by its token (see escaped-sweep.ts). */
  sweep: EscapedSweep;
}

/** The outcome of a run given up before it started (recorded as `stopped` or `canceled`, see endingToRecord). */
const NOT_STARTED: RunEnding = { status: 'failed', reason: 'not started' };

export class Executor {
  private readonly active = new Map<string, ActiveRun>();
  private idleWaiters: (() => void)[] = [];
  /** Set by abandonAll: runs claimed later (their claim was on its way) are given up too. */
  private abandonReason: string | undefined;
  /** Runs the last heartbeat found missing from what Redis holds for this worker. */
  private unheld = new Set<string>();

  constructor(private readonly ctx: ExecutorContext) {
    if (ctx.secret) ctx.logger.info('Runs must be signed: unsigned or altered runs are rejected');
  }

  get size(): number {
    return this.active.size;
  }

  /** Runs whose process has been let go and has not ended. */
  get running(): number {
    return [...this.active.values()].filter((run) => run.startedAtMs !== undefined && !run.ending).length;
  }

  /** Runs claimed and not yet let go (being checked, their files opened, their process spawned). */
  get starting(): number {
    return [...this.active.values()].filter((run) => run.startedAtMs === undefined && !run.ending).length;
  }

  runIds(): string[] {
    return [...this.active.keys()];
  }

  /** Starts a freshly claimed run; resolves once it is under way (not when it ends). */
  dispatch(claim: ClaimedRun): void {
    const run: ActiveRun = { ...claim, cancelRequested: false };
    this.active.set(claim.runId, run);
    void this.execute(run).catch(async (error: unknown) => {
      // fitq's failure, not the run's: it ends stopped (re-staged per its retries, else lost).
      run.abandoned ??= `the worker could not run it: ${(error as Error).message}`;
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

  /** Whether the run is being executed (or recorded) here. */
  has(runId: string): boolean {
    return this.active.has(runId);
  }

  /**
   * Records a claimed run this worker will not run, as stopped by fitq
   * (re-staged per its retries, else lost) for `reason`.
   */
  giveBack(claim: ClaimedRun, reason: string): void {
    if (this.active.has(claim.runId)) return;
    const run: ActiveRun = { ...claim, cancelRequested: false, abandoned: reason };
    this.active.set(claim.runId, run);
    void this.record(run, NOT_STARTED);
  }

  /** Stops a run (SIGTERM, SIGKILL after the grace period); it ends as canceled. */
  cancel(runId: string): boolean {
    const run = this.active.get(runId);
    if (!run) return false;
    run.cancelRequested = true;
    run.process?.terminate(this.ctx.killGraceMs);
    return true;
  }

  /**
   * Terminates every run and keeps runs not yet started from starting, e.g.
   * on a second stop signal or when the worker was fenced, runs handed over
   * later included. `reason` is recorded for them (they end lost or are
   * re-staged, never failed).
   */
  abandonAll(reason: string): void {
    this.abandonReason ??= reason;
    for (const run of this.active.values()) {
      run.abandoned ??= reason;
      run.process?.terminate(this.ctx.killGraceMs);
    }
  }

  /**
   * Stops runs that Redis, at two heartbeats in a row, no longer holds for
   * this worker under their claim's epoch (a claim lost in a failover, or
   * removed by hand): their capacity may be given to other runs, so they
   * must not go on here. Two in a row, so a claim whose reply came in
   * between two heartbeats is never taken for one. Returns the runs stopped.
   */
  stopUnheld(held: readonly { runId: string; epoch: string }[]): string[] {
    const epochs = new Map(held.map(({ runId, epoch }) => [runId, epoch]));
    const missing = new Set<string>();
    const stopped: string[] = [];
    for (const run of this.active.values()) {
      if (run.ending || epochs.get(run.runId) === run.epoch) continue;
      if (!this.unheld.has(run.runId)) {
        missing.add(run.runId);
        continue;
      }
      run.abandoned ??= NOT_HELD;
      run.process?.terminate(this.ctx.killGraceMs);
      stopped.push(run.runId);
    }
    this.unheld = missing;
    return stopped;
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
    if (this.abandonReason !== undefined || run.cancelRequested || run.abandoned) {
      run.abandoned ??= this.abandonReason;
      await this.record(run, NOT_STARTED);
      return;
    }
    // Checked on the very fields it is started with, as the claim read them.
    if (this.ctx.secret) {
      const verdict = verifyRun(this.ctx.secret, { namespace: this.ctx.keys.base, runId: run.runId, fields: run.fields });
      const mismatch = verdict.ok ? claimMismatch(run) : verdict.reason;
      if (mismatch !== undefined) {
        await this.record(run, { status: 'rejected', reason: mismatch });
        return;
      }
    }
    const record = run.run;
    const token = newRunToken();
    const output = new OutputBuffer(
      this.ctx.scripts,
      run.runId,
      this.ctx.workerName,
      this.ctx.token,
      run.epoch,
      this.ctx.logMaxLines,
      (error, retrying) =>
        log.warn(`Could not store output of run ${run.runId}${retrying ? ' yet; retrying until Redis takes it' : ''}: ${(error as Error).message}`),
      this.ctx.givenUp,
    );
    const env: Record<string, string> = {
      ...this.ctx.inheritedEnv,
      ...record.env,
      FITQ_RUN_ID: run.runId,
      [RUN_TOKEN_VARIABLE]: token,
      FITQ_WORKER: this.ctx.workerName,
      FITQ_RESOURCES: grantedResourcesEnv(run.demands),
    };
    // Devices placed by the claim; on a worker without devices, the run's pin.
    const devices = (run.devices.length > 0 ? run.devices : run.pinnedGpus).join(',');
    if (devices) {
      env.CUDA_VISIBLE_DEVICES = devices;
      env.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
    }
    run.process = await startRunProcess({
      command: record.command,
      shell: record.shell,
      cwd: record.cwd,
      env,
      reapEscaped: this.ctx.reapEscaped,
      ...(record.output === undefined ? {} : { output: record.output }),
      onLine: (stream, line) => {
        output.add({ stream, line });
        this.echo(run.runId, stream, line);
      },
    });
    // Canceled or given up while its files were being opened: what cancel() or abandonAll() would have done.
    if (run.cancelRequested || run.abandoned !== undefined) run.process.terminate(this.ctx.killGraceMs);
    // The command waits at a gate until its group is known to the watchdog.
    const group = await run.process.group;
    if (group !== undefined) {
      await this.ctx.watchdog.watch(group);
      run.process.release();
      run.startedAtMs = performance.now();
      this.ctx.onRunStarted?.();
      const limit = runTimeLimit(run, this.ctx.timeLimits);
      const limitFields = limit ? { timeLimitMs: limit.limitMs, timeLimit: formatTimeLimit(limit.limitMs) } : {};
      log.info({ pid: group, ...(devices ? { devices } : {}), ...limitFields }, `Run ${run.runId} started`);
      if (limit) {
        const runProcess = run.process;
        run.disarmLimit = armTimeLimit(limit, {
          signal: (signal) => {
            if (runProcess.signal(signal)) log.info({ signal }, `Run ${run.runId} sent ${signal} ahead of its time limit`);
          },
          expire: (reason, signal) => {
            if (run.cancelRequested || run.abandoned !== undefined || run.ending) return;
            run.timedOut = reason;
            log.info({ signal }, `Run ${run.runId} ${reason}: sending ${signal}, SIGKILL after ${this.ctx.killGraceMs / 1000}s`);
            runProcess.terminate(this.ctx.killGraceMs, signal);
          },
        });
      }
    }
    let outcome: RunEnding = await run.process.outcome;
    // Not the run's doing: it goes back to staged, and the worker claims nothing for a while.
    if (outcome.status === 'returned') {
      outcome = { ...outcome, reason: `its worker ${this.ctx.workerName} ${outcome.reason}` };
      this.ctx.onShortage?.(outcome.reason);
    }
    run.disarmLimit?.();
    if (group !== undefined) this.ctx.watchdog.release(group);
    // Its group is gone; what escaped it (setsid daemons) goes too, while its end is recorded.
    void this.ctx.sweep.sweep(token).then((pids) => {
      if (pids.length > 0) log.info({ pids }, `Killed ${pids.length} process(es) run ${run.runId} left behind (${pids.join(', ')})`);
    });
    await output.flush();
    await this.record(run, outcome);
  }

  /** The run's logger, made once per run. */
  private runLog(run: ActiveRun): Logger {
    run.log ??= this.ctx.logger.child({ runId: run.runId });
    return run.log;
  }

  private echo(runId: string, stream: 'stdout' | 'stderr', line: string): void {
    if (!this.ctx.echoOutput) return;
    if (this.ctx.logFormat === 'json') this.ctx.logger.info({ runId, output: stream }, line);
    else process.stdout.write(`${runId} | ${line}\n`);
  }

  /** Records the end of a run, releasing its reservation, and says what was recorded (or why nothing was). */
  private async record(run: ActiveRun, outcome: RunEnding): Promise<void> {
    run.ending = true;
    const ending = {
      cancelRequested: run.cancelRequested,
      abandoned: run.abandoned,
      started: run.process !== undefined,
      terminated: run.process?.terminated ?? false,
      timedOut: run.timedOut,
    };
    const toRecord = endingToRecord(ending, outcome);
    let result: FinishResult | Error;
    let tries = 1;
    try {
      // Kept and tried again while Redis refuses it (out of memory, busy,
      // failing over): the run keeps its slot meanwhile, as its reservation
      // is still held. The claim's epoch and the registration's token fence
      // a late write: it can never land over a newer claim.
      result = await retryRefused(
        () =>
          this.ctx.scripts.finishRun({
            runId: run.runId,
            worker: this.ctx.workerName,
            token: this.ctx.token,
            epoch: run.epoch,
            ...toRecord,
            exitCode: outcome.exitCode,
            signal: outcome.signal,
          }),
        {
          givenUp: this.ctx.givenUp,
          onRetry: (error, attempt) => {
            tries = attempt + 1;
            if (attempt === 1) {
              this.runLog(run).warn(`Could not record the end of run ${run.runId} yet; retrying until Redis takes it: ${(error as Error).message}`);
            }
          },
        },
      );
    } catch (error) {
      result = error instanceof Error ? error : new Error(String(error));
    }
    const { level, message } = endingMessage(run.runId, ending, outcome, toRecord, result);
    const fields = {
      // What was recorded: the status the run has now (a stopped run: staged or lost).
      status: result instanceof Error || result.outcome !== 'recorded' ? 'unrecorded' : result.status,
      ...(outcome.exitCode !== undefined ? { exitCode: outcome.exitCode } : {}),
      ...(outcome.signal ? { signal: outcome.signal } : {}),
      ...(run.startedAtMs !== undefined ? { durationMs: Math.round(performance.now() - run.startedAtMs) } : {}),
      ...(result instanceof Error ? { err: result } : {}),
      ...(tries > 1 ? { tries } : {}),
    };
    this.runLog(run)[level](fields, message);
    if (!(result instanceof Error) && result.outcome === 'recorded' && result.status !== 'staged') this.ctx.onRunRecorded?.(run.runId, run.fields, result.status);
    this.active.delete(run.runId);
    if (this.active.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      waiters.forEach((resolve) => resolve());
    }
    this.ctx.onRunEnded();
  }
}

/** "gpu=1 mem=8G" for logs, in human units, or "no resources"; an array's limit as the array's slot ("; a slot of array ID"). */
export function describeDemands(demands: Resources): string {
  const arrays = [...demands.keys()].flatMap((name) => arrayOfLimit(name) ?? []);
  return [formatDemands(demands) || 'no resources', ...arrays.map((array) => `a slot of array ${array}`)].join('; ');
}
