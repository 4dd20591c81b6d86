/**
 * A worker: registers its capacity with a lease, claims runs that fit its
 * free capacity (woken by events, with a slow poll as a safety net), runs
 * them, and stops gracefully.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { UsageError } from '../errors.js';
import { resolveNamespace } from '../queue/client.js';
import { closeRedis, connectRedis } from '../queue/connection.js';
import { executorQueueName, obliterateExecutorQueue } from '../queue/executor-queue.js';
import { namespaceKeys, type NamespaceKeys } from '../queue/keys.js';
import { DEFAULT_LOG_MAX_LINES } from '../queue/logs.js';
import { Scripts, type ClaimResult, type IgnoredShape } from '../queue/scripts.js';
import { formatResources } from '../resources/spec.js';
import { describeDemands, Executor } from './executor.js';
import { createLogger } from './logger.js';
import { resolveWorkerOptions, type ResolvedWorkerOptions, type WorkerOptions } from './options.js';
import { Watchdog } from './watchdog.js';

export type { WorkerOptions } from './options.js';

interface WorkerParts {
  options: ResolvedWorkerOptions;
  keys: NamespaceKeys;
  redis: Redis;
  scripts: Scripts;
  logger: Logger;
  logMaxLines: number;
  token: string;
}

export class FitqWorker {
  readonly name: string;
  /** Resolves when the worker has stopped and released everything. */
  readonly done: Promise<void>;

  private readonly options: ResolvedWorkerOptions;
  private readonly keys: NamespaceKeys;
  private readonly redis: Redis;
  private readonly scripts: Scripts;
  private readonly logger: Logger;
  private readonly watchdog: Watchdog;
  private readonly executor: Executor;
  private subscriber: Redis | undefined;
  private token: string;
  private readonly executorQueue: string;
  private resolveDone!: () => void;
  private stopping = false;
  private shutdownDone = false;
  private shutdown: Promise<void> | undefined;
  private claiming = false;
  private claimAgain = false;
  private lastClaim: ClaimResult['code'] | undefined;
  private readonly ignoredLogged = new Set<string>();
  /** Version of each ignored shape when last looked at, to skip unchanged shapes. */
  private readonly ignoredVersions = new Map<string, string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private reapTimer: NodeJS.Timeout | undefined;
  private reregistering: Promise<void> | undefined;

  private constructor(parts: WorkerParts) {
    this.options = parts.options;
    this.name = parts.options.name;
    this.keys = parts.keys;
    this.redis = parts.redis;
    this.scripts = parts.scripts;
    this.logger = parts.logger;
    this.token = parts.token;
    this.executorQueue = executorQueueName(parts.options.name, parts.token);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.watchdog = new Watchdog(Math.ceil(parts.options.killGraceMs / 1000));
    this.executor = new Executor({
      redis: parts.redis,
      keys: parts.keys,
      scripts: parts.scripts,
      watchdog: this.watchdog,
      logger: parts.logger,
      workerName: this.name,
      queueName: this.executorQueue,
      concurrency: parts.options.concurrency,
      killGraceMs: parts.options.killGraceMs,
      logMaxLines: parts.logMaxLines,
      echoOutput: parts.options.echoOutput,
      logFormat: parts.options.logFormat,
      onRunEnded: () => this.wake(),
    });
  }

  /**
   * Starts a worker. Throws UsageError for bad options or a name held by a
   * live worker, ConnectionError when Redis cannot be reached.
   */
  static async start(input: WorkerOptions = {}): Promise<FitqWorker> {
    const options = resolveWorkerOptions(input);
    const { queue, prefix } = resolveNamespace(input);
    const keys = namespaceKeys(queue, prefix);
    const logger = (input.logger ?? createLogger(options.logFormat)).child({ worker: options.name });
    const logMaxLines = input.logMaxLines ?? DEFAULT_LOG_MAX_LINES;
    const redis = await connectRedis(input, true);
    const scripts = new Scripts(redis, keys, logMaxLines);
    const token = randomBytes(8).toString('hex');
    logger.info(`Starting worker ${options.name}`);
    const registered = await scripts
      .registerWorker(
        {
          name: options.name,
          token,
          leaseMs: options.leaseMs,
          concurrency: options.concurrency,
          host: hostname(),
          pid: process.pid,
          resources: formatResources(options.resources),
          executorQueue: executorQueueName(options.name, token),
        },
        Date.now(),
      )
      .catch(async (error: unknown) => {
        await closeRedis(redis);
        throw error;
      });
    if (!registered) {
      await closeRedis(redis);
      throw new UsageError(`a live worker is already named '${options.name}': choose another --name`);
    }
    logger.info(`Worker resources: ${formatResources(options.resources) || '(none)'}`);
    const worker = new FitqWorker({ options, keys, redis, scripts, logger, logMaxLines, token });
    await worker.listen();
    return worker;
  }

  /** Subscribes to wake-ups and starts the heartbeat and the safety-net poll. */
  private async listen(): Promise<void> {
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('error', () => {});
    this.subscriber.on('message', (_channel: string, message: string) => this.onEvent(message));
    // After a reconnect, messages may have been missed: look again.
    this.subscriber.on('ready', () => this.wake());
    await this.subscriber.subscribe(this.keys.events);
    this.timers.push(setInterval(() => void this.heartbeat(), Math.max(100, this.options.leaseMs / 3)));
    this.timers.push(setInterval(() => this.wake(), this.options.pollIntervalMs));
    void this.heartbeat();
    this.wake();
  }

  private onEvent(message: string): void {
    let event: { type?: string; runId?: string; worker?: string };
    try {
      event = JSON.parse(message) as typeof event;
    } catch {
      return;
    }
    if (event.type === 'staged') this.wake();
    else if (event.type === 'cancel' && event.worker === this.name && event.runId) this.requestCancel(event.runId);
  }

  private requestCancel(runId: string): void {
    if (this.executor.cancel(runId)) this.logger.info({ runId }, `Canceling run ${runId}`);
  }

  /** Claims runs while there is room; coalesces concurrent wake-ups. */
  private wake(): void {
    if (this.stopping) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = true;
    void this.claimWhileRoom()
      .catch((error: unknown) => this.logger.warn({ err: error }, `Claim failed: ${(error as Error).message}`))
      .finally(() => {
        this.claiming = false;
        this.finishRunOnceWhenDone();
      });
  }

  private hasRoom(): boolean {
    return this.options.concurrency === 0 || this.executor.size < this.options.concurrency;
  }

  private async claimWhileRoom(): Promise<void> {
    do {
      this.claimAgain = false;
      while (!this.stopping && this.hasRoom()) {
        const token = this.token;
        const result = await this.scripts.claimRun(this.name, token, Date.now(), this.options.concurrency);
        this.lastClaim = result.code;
        if (result.code === 'claimed') {
          this.logger.info({ runId: result.runId }, `Scheduling run ${result.runId} (requires ${describeDemands(result.run)})`);
          await this.executor.dispatch({ runId: result.runId, epoch: result.epoch, fields: result.run });
          continue;
        }
        if (result.code === 'fenced') {
          // Registered anew: claim again at once, runs may have been staged meanwhile.
          await this.onFenced(token);
          this.claimAgain = true;
        } else if (result.code !== 'full') {
          await this.logIgnored(result.ignored);
        }
        break;
      }
    } while (this.claimAgain && !this.stopping);
  }

  /** Logs, once per run, staged runs this worker can never run for lack of a resource. */
  private async logIgnored(shapes: IgnoredShape[]): Promise<void> {
    for (const { shape, missing, version } of shapes) {
      if (this.ignoredVersions.get(shape) === version) continue;
      this.ignoredVersions.set(shape, version);
      for (const runId of await this.redis.zrange(this.keys.staged(shape), 0, -1)) {
        if (this.ignoredLogged.has(runId)) continue;
        this.ignoredLogged.add(runId);
        this.logger.info(
          { runId },
          `Ignoring staged run ${runId} (requires resources not defined for this worker: ${missing.join(', ')})`,
        );
      }
    }
  }

  private finishRunOnceWhenDone(): void {
    if (this.options.runOnce && !this.stopping && !this.claiming && this.executor.size === 0 && this.lastClaim === 'idle') {
      void this.stop();
    }
  }

  private async heartbeat(): Promise<void> {
    try {
      const token = this.token;
      const cancels = await this.scripts.heartbeat(this.name, token, this.options.leaseMs, Date.now());
      if (cancels === undefined) {
        await this.onFenced(token);
        this.wake();
      } else {
        cancels.forEach((runId) => this.requestCancel(runId));
      }
      await this.reap();
    } catch (error) {
      if (!this.shutdownDone) this.logger.warn({ err: error }, `Heartbeat failed: ${(error as Error).message}`);
    }
  }

  /** Reaps dead workers, and comes back exactly when the next lease runs out. */
  private async reap(): Promise<void> {
    const { reaped, nextDeadline } = await this.scripts.reapWorkers(Date.now());
    for (const { name, executorQueue } of reaped) {
      this.logger.warn(`Worker ${name} stopped renewing its lease: its runs are lost`);
      await obliterateExecutorQueue(this.redis, this.keys, executorQueue);
    }
    if (this.reapTimer) clearTimeout(this.reapTimer);
    this.reapTimer = undefined;
    if (nextDeadline !== undefined && !this.shutdownDone) {
      const delay = nextDeadline - Date.now() + 10;
      if (delay < this.options.leaseMs / 3) this.reapTimer = setTimeout(() => void this.reap().catch(() => {}), Math.max(0, delay));
    }
  }

  /**
   * This worker's registration is gone (it was reaped, or Redis lost its
   * data): stop its runs, whose results can no longer be recorded, and
   * register anew. Calls made with an older token are ignored, and only one
   * re-registration runs at a time.
   */
  private onFenced(staleToken: string): Promise<void> {
    if (staleToken !== this.token || this.stopping) return this.reregistering ?? Promise.resolve();
    this.reregistering ??= this.reregister().finally(() => (this.reregistering = undefined));
    return this.reregistering;
  }

  private async reregister(): Promise<void> {
    this.logger.error(`Worker ${this.name} lost its registration (lease expired or Redis lost its data); stopping its runs`);
    this.executor.terminateAll();
    const token = randomBytes(8).toString('hex');
    const registered = await this.scripts.registerWorker(this.registration(token), Date.now());
    if (!registered) {
      this.logger.error(`Another live worker took the name ${this.name}; stopping`);
      void this.stop({ now: true });
      return;
    }
    this.token = token;
    this.logger.info(`Worker ${this.name} registered again`);
  }

  private registration(token: string) {
    return {
      name: this.name,
      token,
      leaseMs: this.options.leaseMs,
      concurrency: this.options.concurrency,
      host: hostname(),
      pid: process.pid,
      resources: formatResources(this.options.resources),
      executorQueue: this.executorQueue,
    };
  }

  /**
   * Stops claiming and waits for the runs to finish; with `now`, terminates
   * them first (SIGTERM to each process group, SIGKILL after the grace period).
   * Resolves when everything is released.
   */
  stop(options: { now?: boolean } = {}): Promise<void> {
    if (options.now) this.executor.terminateAll();
    if (!this.shutdown) {
      this.stopping = true;
      this.logger.info(`Stopping worker ${this.name}`);
      this.shutdown = this.release();
    }
    return this.shutdown;
  }

  private async release(): Promise<void> {
    // Keep the heartbeat going while runs finish, or they would be reaped as lost.
    await this.executor.whenIdle();
    this.shutdownDone = true;
    this.timers.forEach(clearInterval);
    if (this.reapTimer) clearTimeout(this.reapTimer);
    await this.executor.close();
    await this.scripts.deregisterWorker(this.name, this.token, Date.now()).catch(() => {});
    this.watchdog.close();
    if (this.subscriber) await closeRedis(this.subscriber);
    await closeRedis(this.redis);
    this.logger.info(`Worker ${this.name} stopped`);
    this.resolveDone();
  }

  /** Runs being executed now. */
  get activeRuns(): string[] {
    return this.executor.runIds();
  }
}

/** Starts a worker; see FitqWorker.start. */
export function startWorker(options: WorkerOptions = {}): Promise<FitqWorker> {
  return FitqWorker.start(options);
}

