/**
 * A worker: registers its capacity with a lease, claims runs that fit its
 * free capacity (woken by events, with a slow poll as a safety net), runs
 * them, and stops gracefully.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { UsageError } from '../errors.js';
import { resolveNamespace } from '../queue/client.js';
import { closeRedis, connectRedis, describeAclRefusal } from '../queue/connection.js';
import { namespaceKeys, type NamespaceKeys } from '../queue/keys.js';
import { heartbeatIntervalMs } from '../queue/liveness.js';
import { DEFAULT_LOG_MAX_LINES } from '../queue/logs.js';
import { Scripts, type ClaimResult, type WorkerRegistration } from '../queue/scripts.js';
import { formatMicros } from '../resources/amount.js';
import { formatResources } from '../resources/spec.js';
import { watchConnection } from './connection-watch.js';
import { describeDemands, Executor } from './executor.js';
import { IgnoredRuns } from './ignored-runs.js';
import { createLogger } from './logger.js';
import { resolveWorkerOptions, type ResolvedWorkerOptions, type WorkerOptions } from './options.js';
import { registrationFor, within } from './registration.js';
import { resolveGpus } from './gpus.js';
import { stoppedReason } from './run-ending.js';
import { Watchdog } from './watchdog.js';

export type { WorkerOptions } from './options.js';

interface WorkerParts {
  options: ResolvedWorkerOptions;
  keys: NamespaceKeys;
  redis: Redis;
  scripts: Scripts;
  logger: Logger;
  logMaxLines: number;
  registration: WorkerRegistration;
}

/** How long a stopping worker waits for Redis before it gives up recording. */
const GIVE_UP_AFTER_GRACE_MS = 5_000;
/** The reason recorded for runs a worker stops because its registration is gone. */
const LOST_REGISTRATION = 'its worker lost its registration';
/** Why a run claimed for a worker that never heard of the claim is given back. */
const CLAIM_REPLY_LOST = "its worker never received the claim's reply (Redis connection lost)";

export class FitqWorker {
  readonly name: string;
  /** Resolves when the worker has stopped and released everything. */
  readonly done: Promise<void>;
  /** Set when the worker stopped because of an error (e.g. its name was taken). */
  failure: string | undefined;

  private readonly options: ResolvedWorkerOptions;
  private readonly keys: NamespaceKeys;
  private readonly redis: Redis;
  private readonly scripts: Scripts;
  private readonly logger: Logger;
  private readonly logMaxLines: number;
  private readonly watchdog: Watchdog;
  private executor: Executor;
  private token: string;
  private subscriber: Redis | undefined;
  private resolveDone!: () => void;
  private stopping = false;
  private released = false;
  private shutdown: Promise<void> | undefined;
  private stopRequested: 'graceful' | 'now' | undefined;
  /** Resolves when a forced stop stops waiting for Redis. */
  private readonly givenUp: Promise<void>;
  private giveUp!: () => void;
  private giveUpTimer: NodeJS.Timeout | undefined;
  private claimLoop: Promise<void> | undefined;
  private claimAgain = false;
  private lastClaim: ClaimResult['code'] | undefined;
  /** Whether a claim call is on its way (its run is not the executor's yet). */
  private claimInFlight = false;
  /** Whether the last claim found the queue paused. */
  private queuePaused = false;
  private reregistering: Promise<void> | undefined;
  private fencedWhileStopping = false;
  /** The blocked head this worker holds resources for, if any. */
  private holding: string | undefined;
  private readonly ignoredRuns: IgnoredRuns;
  private readonly timers: NodeJS.Timeout[] = [];
  private reapTimer: NodeJS.Timeout | undefined;
  private unwatchConnection: (() => void) | undefined;
  /** Interrupts (Ctrl-C, SIGTERM) received so far. */
  private interrupts = 0;

  private constructor(parts: WorkerParts) {
    this.options = parts.options;
    this.name = parts.options.name;
    this.keys = parts.keys;
    this.redis = parts.redis;
    this.scripts = parts.scripts;
    this.logger = parts.logger;
    this.logMaxLines = parts.logMaxLines;
    this.token = parts.registration.token;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.givenUp = new Promise((resolve) => (this.giveUp = resolve));
    this.watchdog = new Watchdog(Math.ceil(parts.options.killGraceMs / 1000), (message) =>
      this.logger.error(`${message}; runs of this worker would outlive it if it died`),
    );
    this.ignoredRuns = new IgnoredRuns(parts.redis, parts.keys, parts.logger);
    this.executor = this.createExecutor();
  }

  private createExecutor(): Executor {
    return new Executor({
      keys: this.keys,
      scripts: this.scripts,
      watchdog: this.watchdog,
      logger: this.logger,
      workerName: this.name,
      token: this.token,
      killGraceMs: this.options.killGraceMs,
      logMaxLines: this.logMaxLines,
      echoOutput: this.options.echoOutput,
      logFormat: this.options.logFormat,
      onRunEnded: () => this.wake(),
      secret: this.options.secret,
    });
  }

  /**
   * Starts a worker. Throws UsageError for bad options or a name held by a
   * live worker, ConnectionError when Redis cannot be reached.
   */
  static async start(input: WorkerOptions = {}): Promise<FitqWorker> {
    resolveWorkerOptions(input); // validate before looking for devices
    const gpus = await resolveGpus(input.gpus);
    const options = resolveWorkerOptions(input, gpus.devices);
    const { queue, prefix } = resolveNamespace(input);
    const keys = namespaceKeys(queue, prefix);
    const logger = (input.logger ?? createLogger(options.logFormat)).child({ worker: options.name });
    const logMaxLines = input.logMaxLines ?? DEFAULT_LOG_MAX_LINES;
    const redis = await connectRedis(input, true);
    const scripts = new Scripts(redis, keys, logMaxLines);
    const registration = registrationFor(options);
    logger.info(`Starting worker ${options.name}`);
    const registered = await scripts.registerWorker(registration).catch(async (error: unknown) => {
      await closeRedis(redis);
      throw error;
    });
    if (!registered) {
      await closeRedis(redis);
      throw new UsageError(`a live worker is already named '${options.name}': choose another --name`);
    }
    if (gpus.whyNone) logger.warn(`--gpus auto found no GPU devices: ${gpus.whyNone}`);
    logger.info(`Worker resources: ${formatResources(options.resources) || '(none)'}`);
    if (options.devices.length > 0) logger.info(`GPU devices: ${options.devices.join(',')}`);
    for (const [name, amount] of options.resources) {
      const source = input.resourceSources?.get(name);
      if (source) logger.debug(`Resource ${name}=${formatMicros(amount)} from ${source}`);
    }
    const worker = new FitqWorker({ options, keys, redis, scripts, logger, logMaxLines, registration });
    await worker.listen();
    return worker;
  }

  /** Subscribes to wake-ups and starts the heartbeat and the safety-net poll. */
  private async listen(): Promise<void> {
    this.unwatchConnection = watchConnection(this.redis, this.logger);
    this.subscriber = this.redis.duplicate();
    this.subscriber.on('error', () => {});
    this.subscriber.on('message', (_channel: string, message: string) => this.onEvent(message));
    // After a reconnect, messages may have been missed: look again.
    this.subscriber.on('ready', () => this.wake());
    await this.subscriber.subscribe(this.keys.events);
    this.timers.push(setInterval(() => void this.heartbeat(), heartbeatIntervalMs(this.options.leaseMs)));
    this.timers.push(setInterval(() => this.wake(), this.options.pollIntervalMs));
    void this.heartbeat();
    this.wake();
  }

  private onEvent(message: string): void {
    let event: { type?: string; runId?: string; worker?: string; now?: boolean };
    try {
      event = JSON.parse(message) as typeof event;
    } catch {
      return;
    }
    if (event.type === 'staged' || event.type === 'pool' || event.type === 'poolReleased' || event.type === 'resumed') this.wake();
    // Holds moved elsewhere (an older run held, or the held run started): claim again, perhaps to backfill.
    else if (event.type === 'holds' && event.worker !== this.name && this.holding !== undefined) this.wake();
    else if (event.type === 'cancel' && event.worker === this.name && event.runId) this.requestCancel(event.runId);
    else if (event.type === 'stop' && event.worker === this.name) this.stopOnRequest(event.now === true);
  }

  /** `fitq stop`, from any machine: once per mode (a later "now" still terminates the runs). */
  private stopOnRequest(now: boolean): void {
    if (now ? this.stopRequested === 'now' : this.stopRequested !== undefined) return;
    this.stopRequested = now ? 'now' : 'graceful';
    this.logger.info(`Stop requested through Redis${now ? ': terminating runs' : ': letting runs finish'}`);
    void this.stop({ now, why: now ? 'fitq stop --now' : undefined });
  }

  private requestCancel(runId: string): void {
    if (this.executor.cancel(runId)) this.logger.info({ runId }, `Canceling run ${runId}`);
  }

  /** Claims runs while there is room; coalesces concurrent wake-ups. */
  private wake(): void {
    if (this.stopping) return;
    if (this.claimLoop) {
      this.claimAgain = true;
      return;
    }
    this.claimLoop = this.claimWhileRoom()
      .catch((error: unknown) => {
        // A command Redis refuses this worker's user would refuse every claim the same way.
        const refusal = describeAclRefusal(error as Error, 'a command claiming runs needs');
        if (refusal) this.fail(refusal);
        else this.logger.warn({ err: error }, `Claim failed: ${(error as Error).message}`);
      })
      .finally(() => {
        this.claimLoop = undefined;
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
        const result = await this.claimAndDispatch(token);
        if (result.code === 'claimed') continue;
        if (result.code === 'fenced') {
          // Registered anew: claim again at once, runs may have been staged meanwhile.
          await this.onFenced(token);
          this.claimAgain = true;
        } else if (result.code !== 'full' && result.code !== 'paused') {
          this.noteHolding(result.code === 'waiting' ? result.holding : undefined);
          await this.ignoredRuns.report(result.ignored);
        }
        break;
      }
    } while (this.claimAgain && !this.stopping);
  }

  /** One claim; a claimed run goes to the executor before anyone may ask whether this worker runs it. */
  private async claimAndDispatch(token: string): Promise<ClaimResult> {
    this.claimInFlight = true;
    try {
      const result = await this.scripts.claimRun(
        this.name, token, Date.now(), this.options.concurrency, this.options.policy, this.options.gpuPlacement,
      );
      this.lastClaim = result.code;
      if (result.code !== 'fenced') this.notePaused(result.code === 'paused');
      if (result.code === 'claimed') {
        this.logger.info(
          { runId: result.runId, epoch: Number(result.epoch), requires: result.run.resources ?? '' },
          `Scheduling run ${result.runId} (requires ${describeDemands(result.run)})`,
        );
        this.executor.dispatch({ runId: result.runId, epoch: result.epoch, fields: result.run });
      }
      return result;
    } finally {
      this.claimInFlight = false;
    }
  }

  /** Logs when the claims find the queue paused, and when no longer. */
  private notePaused(paused: boolean): void {
    if (paused === this.queuePaused) return;
    this.queuePaused = paused;
    this.logger.info(paused ? 'The queue is paused (fitq pause): starting no run until fitq resume' : 'The queue was resumed');
  }

  /** Logs (at debug level) when this worker starts holding resources for a blocked head. */
  private noteHolding(runId: string | undefined): void {
    if (runId && runId !== this.holding) {
      this.logger.debug({ runId }, `Holding resources for run ${runId} (next in line; later runs may not take them)`);
    }
    this.holding = runId;
  }

  /**
   * Runs Redis holds for this worker that it is not running: a claim whose
   * reply never came back (the connection dropped as Redis answered). With
   * no claim on its way, such a run never started here: it is given back
   * (re-staged per its retries, else lost).
   */
  private giveBackUnknownClaims(token: string, held: readonly { runId: string; epoch: string }[]): void {
    // A claim on its way may be one of them: look again at the next heartbeat.
    if (token !== this.token || this.claimInFlight) return;
    for (const { runId, epoch } of held) {
      if (this.executor.has(runId)) continue;
      this.logger.warn({ runId }, `Run ${runId} was claimed for this worker but the claim's reply never arrived (Redis connection lost); giving it back`);
      this.executor.giveBack({ runId, epoch, fields: {} }, CLAIM_REPLY_LOST);
    }
  }

  private finishRunOnceWhenDone(): void {
    if (this.options.runOnce && !this.stopping && !this.claimLoop && this.executor.size === 0 && this.lastClaim === 'idle') {
      void this.stop();
    }
  }

  private async heartbeat(): Promise<void> {
    try {
      const token = this.token;
      const reply = await this.scripts.heartbeat(this.name, token, this.options.leaseMs);
      if (reply === undefined) {
        await this.onFenced(token);
        this.wake();
      } else {
        reply.cancels.forEach((runId) => this.requestCancel(runId));
        this.giveBackUnknownClaims(token, reply.held);
        if (reply.stop) this.stopOnRequest(reply.stop === 'now');
      }
      await this.reap();
    } catch (error) {
      if (!this.released) this.logger.warn({ err: error }, `Heartbeat failed: ${(error as Error).message}`);
    }
  }

  /** Reaps dead workers, and comes back exactly when the next lease runs out. */
  private async reap(): Promise<void> {
    const { reaped, msUntilNext } = await this.scripts.reapWorkers();
    for (const name of reaped) this.logger.warn(`Worker ${name} stopped renewing its lease: its runs are lost`);
    if (this.reapTimer) clearTimeout(this.reapTimer);
    this.reapTimer = undefined;
    if (msUntilNext !== undefined && !this.released && msUntilNext + 10 < this.options.leaseMs / 3) {
      this.reapTimer = setTimeout(() => void this.reap().catch(() => {}), msUntilNext + 10);
    }
  }

  /**
   * This worker's registration is gone (it was reaped, or Redis lost its
   * data). Calls made with an older token are ignored, and only one
   * re-registration runs at a time. A stopping worker does not register
   * again, but its runs must still go: the old registration's runs are
   * re-staged or lost, and may start elsewhere.
   */
  private onFenced(staleToken: string): Promise<void> {
    if (staleToken !== this.token || this.reregistering) return this.reregistering ?? Promise.resolve();
    if (this.stopping) {
      if (!this.fencedWhileStopping) {
        this.fencedWhileStopping = true;
        this.logger.error(`Worker ${this.name} lost its registration (lease expired or Redis lost its data) while stopping; stopping its runs`);
      }
      this.executor.abandonAll(LOST_REGISTRATION);
      return Promise.resolve();
    }
    this.reregistering = this.reregister().finally(() => (this.reregistering = undefined));
    return this.reregistering;
  }

  /**
   * Stops the runs of the lost registration (their results can no longer be
   * recorded), waits until they are gone so nothing is oversubscribed, then
   * registers anew with a fresh execution queue.
   */
  private async reregister(): Promise<void> {
    this.logger.error(`Worker ${this.name} lost its registration (lease expired or Redis lost its data); stopping its runs`);
    const old = this.executor;
    old.abandonAll(LOST_REGISTRATION);
    await within(old.whenIdle(), this.options.killGraceMs + GIVE_UP_AFTER_GRACE_MS);
    const registration = registrationFor(this.options);
    if (!(await this.scripts.registerWorker(registration))) {
      this.fail(`another live worker took the name '${this.name}'`);
      return;
    }
    this.token = registration.token;
    this.executor = this.createExecutor();
    this.logger.info(`Worker ${this.name} registered again`);
  }

  /** Stops for good, terminating runs; `failure` becomes the CLI's one-line error (exit 1). */
  private fail(failure: string): void {
    if (this.failure !== undefined) return;
    this.failure = failure;
    this.logger.error(`${failure}; stopping`);
    void this.stop({ now: true, why: failure });
  }

  /**
   * A foreground worker's Ctrl-C or SIGTERM: the first stops it gracefully,
   * the next terminates its runs.
   */
  interrupt(): Promise<void> {
    this.interrupts += 1;
    const runs = this.executor.size;
    const plural = runs === 1 ? 'run' : 'runs';
    if (this.interrupts > 1) {
      this.logger.info(`Interrupted again: terminating ${runs} ${plural}`);
      return this.stop({ now: true, why: 'second interrupt' });
    }
    this.logger.info(runs === 0 ? 'Stopping: no runs to wait for' : `Stopping: letting ${runs} ${plural} finish; press Ctrl-C again to terminate them`);
    return this.stop();
  }

  /**
   * Stops claiming and waits for the runs to finish; with `now`, terminates
   * them first (SIGTERM to each process group, SIGKILL after the grace
   * period) and, if Redis stays unreachable, gives up recording them soon
   * after. Runs it terminates did not fail: they are re-staged if they have
   * retries left, else they end lost, with the reason "its worker W was
   * stopped (`why`)". Resolves when everything is released.
   */
  stop(options: { now?: boolean; why?: string | undefined } = {}): Promise<void> {
    if (options.now) {
      this.executor.abandonAll(stoppedReason(this.name, options.why));
      this.giveUpTimer ??= setTimeout(this.giveUp, this.options.killGraceMs + GIVE_UP_AFTER_GRACE_MS);
    }
    if (!this.shutdown) {
      this.stopping = true;
      this.logger.info(`Stopping worker ${this.name}`);
      this.shutdown = this.release();
    }
    return this.shutdown;
  }

  private async release(): Promise<void> {
    // A claim in flight may still hand this worker a run: let it land first.
    await Promise.race([Promise.allSettled([this.claimLoop, this.reregistering]), this.givenUp]);
    // Claiming nothing more, it must not keep its blocked head from other workers.
    await within(this.scripts.dropHold(this.name, this.token).catch(() => {}), GIVE_UP_AFTER_GRACE_MS);
    // Keep the heartbeat going while runs finish, or they would be reaped as lost.
    const idle = await Promise.race([this.executor.whenIdle().then(() => true), this.givenUp.then(() => false)]);
    if (!idle) {
      // Deregistering gives their capacity back: nothing of them may still run then.
      const pending = this.executor.size;
      const killed = await this.executor.killAll(1000);
      if (killed > 0) this.logger.error(`Killed ${killed} run(s) still running after the grace period (SIGKILL)`);
      // The others ended (or never started) but their end is still on its way to Redis.
      const unrecorded = pending - killed;
      if (unrecorded > 0) {
        this.logger.error(
          `Could not record the end of ${unrecorded} run(s) (is Redis reachable?); they end lost, or are re-staged per their retries, when the lease runs out`,
        );
      }
    }
    this.released = true;
    this.unwatchConnection?.();
    this.timers.forEach(clearInterval);
    if (this.reapTimer) clearTimeout(this.reapTimer);
    if (this.giveUpTimer) clearTimeout(this.giveUpTimer);
    await within(this.scripts.deregisterWorker(this.name, this.token, Date.now()).catch(() => {}), GIVE_UP_AFTER_GRACE_MS);
    this.watchdog.close();
    if (this.subscriber) await within(closeRedis(this.subscriber), 1000);
    await within(closeRedis(this.redis), 1000);
    this.subscriber?.disconnect();
    this.redis.disconnect();
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
