/**
 * Executes claimed runs. A claimed run is handed to this worker's own BullMQ
 * queue (job id = run id + claim epoch, so the hand-off is idempotent) and
 * run by a BullMQ Worker processor: the child process, its output, and the
 * final record, fenced by the claim epoch and the registration's lease.
 */
import { Queue, Worker as BullWorker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { NamespaceKeys } from '../queue/keys.js';
import { parseRunFields, runDemands } from '../queue/run-record.js';
import type { FinishResult, Scripts } from '../queue/scripts.js';
import { formatResources, resourcesToJson } from '../resources/spec.js';
import { describeAclRefusal } from '../queue/connection.js';
import { claimMismatch } from '../security/claim-check.js';
import { verifyRun } from '../security/signing.js';
import { startRunProcess, type RunProcess } from './child.js';
import { OutputBuffer } from './output.js';
import { endingMessage, endingToRecord, type RunEnding } from './run-ending.js';
import type { LogFormat } from './logger.js';
import type { Watchdog } from './watchdog.js';

export interface ClaimedRun {
  runId: string;
  epoch: string;
  fields: Record<string, string>;
}

interface ActiveRun extends ClaimedRun {
  process?: RunProcess;
  cancelRequested: boolean;
  /** Why the run must stop (or not start at all): the worker is stopping or was fenced. */
  abandoned?: string;
}

/** What the execution queue holds per run; command and resources are there for dashboards. */
interface JobData {
  runId: string;
  epoch: string;
  command: string;
  resources: string;
}

export interface ExecutorContext {
  redis: Redis;
  keys: NamespaceKeys;
  scripts: Scripts;
  watchdog: Watchdog;
  logger: Logger;
  workerName: string;
  /** The token of the registration this executor runs for: its writes are refused once that is gone. */
  token: string;
  /** BullMQ queue name of this worker, unique per worker process. */
  queueName: string;
  concurrency: number;
  killGraceMs: number;
  logMaxLines: number;
  echoOutput: boolean;
  logFormat: LogFormat;
  /** Called after a run has ended and been recorded. */
  onRunEnded: () => void;
  /** Called when the execution queue can never work (Redis refuses it a command). */
  onFatal: (message: string) => void;
  /**
   * Shared secret: runs not signed with it end `rejected` without starting.
   * Without one, every run runs (signed or not).
   */
  secret?: Buffer | undefined;
}

interface BullParts {
  queue: Queue;
  worker: BullWorker;
}

const RETRY_DELAY_MS = 250;
/** The outcome of a run given up before it started (recorded as `stopped` or `canceled`, see endingToRecord). */
const NOT_STARTED: RunEnding = { status: 'failed', reason: 'not started' };
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Executor {
  private readonly active = new Map<string, ActiveRun>();
  private idleWaiters: (() => void)[] = [];
  private closing = false;
  /** Set by abandonAll: runs handed over later (their claim was on its way) are given up too. */
  private abandonReason: string | undefined;
  /** The BullMQ queue and worker, once both are connected. */
  private readonly parts: Promise<BullParts | undefined>;
  private readonly supervisor: Promise<void>;

  constructor(private readonly ctx: ExecutorContext) {
    if (ctx.secret) ctx.logger.info('Runs must be signed: unsigned or altered runs are rejected');
    this.parts = this.connectParts();
    this.supervisor = this.keepProcessing();
  }

  /**
   * Creates the BullMQ queue and worker. BullMQ gives up on a connection
   * whose first commands fail (Redis went away just then), so on failure
   * both are made anew until they connect.
   */
  private async connectParts(): Promise<BullParts | undefined> {
    const options = { connection: this.ctx.redis, prefix: this.ctx.keys.bullPrefix };
    while (!this.closing) {
      const queue = new Queue(this.ctx.queueName, options);
      queue.on('error', (error) => this.onBullError('executor queue error', error));
      const worker = new BullWorker(this.ctx.queueName, (job: Job<JobData>) => this.process(job), {
        ...options,
        concurrency: this.ctx.concurrency > 0 ? this.ctx.concurrency : 10_000,
        // Our lease and reaper decide what happened to a run; BullMQ must never re-run one.
        skipStalledCheck: true,
        maxStalledCount: 0,
        autorun: false,
      });
      worker.on('error', (error) => this.onBullError('executor worker error', error));
      try {
        await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
        return { queue, worker };
      } catch (error) {
        this.ctx.logger.debug({ err: error }, 'executor could not connect; retrying');
        await Promise.allSettled([worker.close(true), queue.close()]);
        await delay(RETRY_DELAY_MS);
      }
    }
    return undefined;
  }

  /**
   * BullMQ errors are mostly passing (a connection drop, retried); a command
   * Redis refuses to the worker's user never passes, and a run would wait on
   * it forever, so that one is fatal.
   */
  private onBullError(what: string, error: Error): void {
    this.ctx.logger.debug({ err: error }, what);
    const refusal = describeAclRefusal(error, 'a command the execution queue needs');
    if (refusal) this.ctx.onFatal(refusal);
  }

  /** Runs the BullMQ worker loop, restarting it if a connection failure ends it. */
  private async keepProcessing(): Promise<void> {
    const parts = await this.parts;
    while (parts && !this.closing) {
      try {
        await parts.worker.run();
      } catch (error) {
        this.ctx.logger.debug({ err: error }, 'executor worker stopped; restarting it');
      }
      if (!this.closing) await delay(RETRY_DELAY_MS);
    }
  }

  get size(): number {
    return this.active.size;
  }

  runIds(): string[] {
    return [...this.active.keys()];
  }

  /** Hands a freshly claimed run to the execution queue. */
  async dispatch(claim: ClaimedRun): Promise<void> {
    const run: ActiveRun = { ...claim, cancelRequested: false };
    this.active.set(claim.runId, run);
    if (this.abandonReason !== undefined) {
      run.abandoned = this.abandonReason;
      await this.record(run, NOT_STARTED);
      return;
    }
    const data: JobData = {
      runId: claim.runId,
      epoch: claim.epoch,
      command: claim.fields.command ?? '[]',
      resources: claim.fields.resources ?? '',
    };
    try {
      const parts = await this.parts;
      if (!parts) throw new Error('the worker is stopping');
      await parts.queue.add('run', data, {
        jobId: `${claim.runId}-${claim.epoch}`,
        removeOnComplete: true,
        removeOnFail: true,
      });
    } catch (error) {
      // fitq's failure, not the run's: it ends stopped (re-staged per its retries, else lost).
      run.abandoned ??= `could not hand the run to the executor: ${(error as Error).message}`;
      await this.record(run, NOT_STARTED);
      // A command Redis refuses this worker's user would refuse every run the same way.
      const refusal = describeAclRefusal(error as Error, 'a command the execution queue needs');
      if (refusal) this.ctx.onFatal(refusal);
    }
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
   * Kills (SIGKILL) the process group of every run still running, and
   * resolves with how many there were once they have exited (or after
   * `waitMs`): the last resort before the worker gives their capacity back.
   */
  async killAll(waitMs: number): Promise<number> {
    const killed = [...this.active.values()].flatMap((run) => (run.process?.kill() ? [run.process.outcome] : []));
    if (killed.length > 0) {
      await Promise.race([Promise.allSettled(killed), new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
    }
    return killed.length;
  }

  /** Resolves when no run is active. */
  whenIdle(): Promise<void> {
    if (this.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Closes the execution queue and deletes it; `force` does not wait for runs being recorded. */
  async close(force = false): Promise<void> {
    this.closing = true;
    const parts = await this.parts;
    if (!parts) return;
    await parts.worker.close(force);
    await this.supervisor;
    await parts.queue.obliterate({ force: true }).catch(() => {});
    await parts.queue.close();
  }

  private async process(job: Job<JobData>): Promise<void> {
    const run = this.active.get(job.data.runId);
    if (!run || run.epoch !== job.data.epoch) return; // a hand-off from an older claim
    const log = this.ctx.logger.child({ runId: run.runId });
    if (run.cancelRequested || run.abandoned) {
      await this.record(run, NOT_STARTED);
      return;
    }
    // Checked on the very fields it is started with, as the claim read them.
    if (this.ctx.secret) {
      const verdict = verifyRun(this.ctx.secret, { namespace: this.ctx.keys.base, runId: run.runId, fields: run.fields });
      const mismatch = verdict.ok ? claimMismatch(run.fields) : verdict.reason;
      if (mismatch !== undefined) {
        await this.record(run, { status: 'rejected', reason: mismatch });
        return;
      }
    }
    const record = parseRunFields(run.fields);
    const output = new OutputBuffer(this.ctx.scripts, run.runId, this.ctx.workerName, this.ctx.token, run.epoch, this.ctx.logMaxLines, (error) =>
      log.warn({ err: error }, `Could not store output of run ${run.runId}`),
    );
    const env: Record<string, string> = {
      ...inheritedEnv(),
      ...record.env,
      FITQ_RUN_ID: run.runId,
      FITQ_WORKER: this.ctx.workerName,
      FITQ_RESOURCES: JSON.stringify(resourcesToJson(runDemands(run.fields))),
    };
    // Devices placed by the claim; on a worker without devices, the run's pin.
    const devices = run.fields.devices || run.fields.gpus;
    if (devices) {
      env.CUDA_VISIBLE_DEVICES = devices;
      env.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
    }
    run.process = startRunProcess({
      command: record.command,
      shell: record.shell,
      cwd: record.cwd,
      env,
      onLine: (stream, line) => {
        output.add({ stream, line });
        this.echo(run.runId, stream, line);
      },
    });
    if (run.process.pid !== undefined) {
      // The command waits at a gate until its group is known to the watchdog.
      await this.ctx.watchdog.watch(run.process.pid);
      run.process.release();
      log.info(`Run ${run.runId} started`);
    }
    const outcome = await run.process.outcome;
    if (run.process.pid !== undefined) this.ctx.watchdog.release(run.process.pid);
    await output.flush();
    await this.record(run, outcome);
  }

  private echo(runId: string, stream: 'stdout' | 'stderr', line: string): void {
    if (!this.ctx.echoOutput) return;
    if (this.ctx.logFormat === 'json') this.ctx.logger.info({ runId, output: stream }, line);
    else process.stdout.write(`${runId} | ${line}\n`);
  }

  /** Records the end of a run, releasing its reservation, and says what was recorded (or why nothing was). */
  private async record(run: ActiveRun, outcome: RunEnding): Promise<void> {
    const ending = {
      cancelRequested: run.cancelRequested,
      abandoned: run.abandoned,
      started: run.process !== undefined,
      terminated: run.process?.terminated ?? false,
    };
    const toRecord = endingToRecord(ending, outcome);
    let result: FinishResult | Error;
    try {
      result = await this.ctx.scripts.finishRun(
        {
          runId: run.runId,
          worker: this.ctx.workerName,
          token: this.ctx.token,
          epoch: run.epoch,
          ...toRecord,
          exitCode: outcome.exitCode,
          signal: outcome.signal,
        },
        Date.now(),
      );
    } catch (error) {
      result = error instanceof Error ? error : new Error(String(error));
    }
    const { level, message } = endingMessage(run.runId, ending, outcome, toRecord, result);
    this.ctx.logger.child({ runId: run.runId })[level](result instanceof Error ? { err: result } : {}, message);
    this.active.delete(run.runId);
    if (this.active.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      waiters.forEach((resolve) => resolve());
    }
    this.ctx.onRunEnded();
  }
}

/** The worker's environment for a run, less FITQ_SECRET: a run printing its environment must not put the secret in Redis. */
function inheritedEnv(): Record<string, string> {
  const env = { ...(process.env as Record<string, string>) };
  delete env.FITQ_SECRET;
  return env;
}

/** "a=1 b=2" for logs, or "no resources". */
export function describeDemands(fields: Record<string, string>): string {
  return formatResources(runDemands(fields)) || 'no resources';
}
