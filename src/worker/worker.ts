/**
 * A worker: registers its capacity with a lease, claims runs that fit its
 * free capacity (woken by events, with a slow poll as a safety net), runs
 * them, and stops gracefully. This is the facade composing its parts: the
 * lifecycle (its state), the lease and its heartbeat, the claim loop, the
 * reconciler and the events it hears; it owns the stop sequence (its
 * start, up to its registration, is worker-start.ts).
 */
import type { Logger } from 'pino';
import { EscapedSweep } from './escaped-sweep.js';
import { EvictionGuard } from './eviction-guard.js';
import { type RedisConnection } from '../redis/connection.js';
import { closeRedis } from '../redis/open-connections.js';
import type { Subscription } from '../redis/subscription.js';
import type { NamespaceKeys } from '../queue/keys.js';
import type { Scripts } from '../queue/scripts.js';
import { ClaimLoop } from './claims.js';
import { watchConnection } from './connection-watch.js';
import { subscribeEvents } from './events.js';
import { Executor } from './executor.js';
import { GpuWatch } from './gpu-watch.js';
import { visibleAs } from '../gpu/gpu-devices.js';
import { Heartbeat } from './heartbeat.js';
import { LostClaims } from './lost-claims.js';
import { ReplicaConfirm } from './replica-confirm.js';
import { IgnoredRuns } from './ignored-runs.js';
import { Lease } from './lease.js';
import { NOTIFY_SHUTDOWN_MS, Notifier } from './notifier.js';
import { GIVE_UP_AFTER_GRACE_MS, Lifecycle } from './lifecycle.js';
import type { ResolvedWorkerOptions, WorkerOptions } from './options.js';
import { Reaper } from './reaper.js';
import { Reconciler } from './reconciler.js';
import { within } from './registration.js';
import { Requests } from './requests.js';
import { requestCheck } from './request-check.js';
import { inheritedEnv } from './run-env.js';
import { stoppedReason } from './run-ending.js';
import { spawnHelper } from './spawner/spawner.js';
import { openWorker, type WorkerParts } from './worker-start.js';
import { UsageMeter } from './usage/usage-meter.js';
import { readUserKey } from '../operations/user-keys.js';

export type { WorkerOptions } from './options.js';

export class FitqWorker {
  readonly name: string;
  /** Resolves when the worker has stopped and released everything. */
  readonly done: Promise<void>;
  /** Set when the worker stopped because of an error (e.g. its name was taken). */
  failure: string | undefined;

  private readonly options: ResolvedWorkerOptions;
  private readonly keys: NamespaceKeys;
  private readonly redis: RedisConnection;
  private readonly scripts: Scripts;
  private readonly logger: Logger;
  private readonly lifecycle: Lifecycle;
  private readonly lease: Lease;
  private readonly requests: Requests;
  private readonly claims: ClaimLoop;
  private readonly reconciler: Reconciler;
  private readonly reaper: Reaper;
  private readonly heartbeat: Heartbeat;
  private readonly notifier: Notifier;
  private readonly eviction: EvictionGuard;
  private readonly gpuWatch: GpuWatch | undefined;
  private readonly usage: UsageMeter;
  private resolveDone!: () => void;
  private subscriber: Subscription | undefined;
  private poll: NodeJS.Timeout | undefined;
  private unwatchConnection: (() => void) | undefined;
  private readonly metrics: WorkerParts['metrics'];

  private constructor(parts: WorkerParts) {
    const { options, keys, redis, scripts, logger, logMaxLines } = parts;
    this.options = options;
    this.name = options.name;
    this.keys = keys;
    this.redis = redis;
    this.scripts = scripts;
    this.logger = logger;
    this.metrics = parts.metrics;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    const lifecycle = new Lifecycle(options.killGraceMs + GIVE_UP_AFTER_GRACE_MS);
    // Started now, so the first run need not wait for it.
    spawnHelper();
    const ignoredRuns = new IgnoredRuns(redis, keys, logger);
    const fail = (failure: string) => this.fail(failure);
    const runEnv = inheritedEnv(process.env, options.passRedisEnv, parts.connection);
    const sweep = new EscapedSweep();
    const notifier = new Notifier({ redis, keys, queue: parts.queue, logger, ...options.notify });
    this.notifier = notifier;
    const replicas = options.waitReplicas ? new ReplicaConfirm(redis, keys.base, options.waitReplicas) : undefined;
    const usage = (this.usage = new UsageMeter(parts.cgroups, options.enforce, logger));
    const checkRequests = options.requireSigned ? requestCheck(redis, keys, scripts) : undefined;
    // Each registration gets its own executor; a run's end wakes the claim loop (built after the first executor).
    const createExecutor = (token: string) =>
      new Executor({
        keys,
        scripts,
        logger,
        workerName: options.name,
        token,
        killGraceMs: options.killGraceMs,
        timeLimits: options.timeLimits,
        logMaxLines,
        echoOutput: options.echoOutput,
        logFormat: options.logFormat,
        onRunEnded: () => this.claims.wake(),
        onRunStarted: () => this.claims.started(),
        onShortage: (reason) => this.claims.backOff(reason),
        // (A run recorded lost is notified through the outbox, as runs lost with their worker are.)
        onRunRecorded: (runId, fields, status) => {
          if (status !== 'lost') notifier.runEnded(runId, status, fields.notify);
        },
        // An older registration's writes are refused anyway (fenced): no use retrying them.
        givenUp: () => lifecycle.stopped || this.lease.token !== token,
        secret: options.secret,
        userKeyOf: options.requireSigned ? (user) => readUserKey({ redis, keys }, user) : undefined,
        requestCheck: checkRequests,
        gpuVendor: options.gpuVendor,
        deviceNames: new Map(options.gpuDevices.map((device) => [device.id, visibleAs(device)])),
        inheritedEnv: runEnv,
        reapEscaped: options.reapEscaped,
        sweep,
        replicas,
        usage,
      });
    // Checked again while it runs: claims and registrations wait while Redis may evict keys.
    const eviction = new EvictionGuard(redis, parts.shownUrl, logger, () => this.claims.wake());
    this.eviction = eviction;
    const mayEvict = () => eviction.check();
    const lease = new Lease({ options, scripts, logger, lifecycle, createExecutor, fail, mayEvict }, parts.registration.token);
    const requests = new Requests(logger, lease, (stop) => this.stop(stop), { redis, keys, worker: options.name }, checkRequests);
    const claims = new ClaimLoop({
      options, scripts, logger, lease, lifecycle, ignoredRuns, fail, finished: () => void this.stop(), observer: parts.metrics?.metrics,
      evicting: () => eviction.evicting,
    });
    const reaper = new Reaper(scripts, logger, lifecycle, options.leaseMs);
    this.lifecycle = lifecycle;
    this.lease = lease;
    this.requests = requests;
    this.claims = claims;
    this.reaper = reaper;
    this.reconciler = new Reconciler(scripts, logger, lifecycle);
    const lostClaims = new LostClaims({ name: options.name, scripts, logger });
    this.gpuWatch = options.gpuProbe.intervalMs > 0
      ? new GpuWatch({
        name: options.name, vendor: options.gpuVendor, devices: options.gpuDevices, probe: options.gpuProbe, scripts, logger,
        token: () => lease.token, runMarks: () => lease.executor.runMarks(), freed: () => claims.wake(),
        ownMemory: (runId, device, bytes) => usage.gpuMemory(runId, device, bytes),
      })
      : undefined;
    this.heartbeat = new Heartbeat({
      name: options.name, leaseMs: options.leaseMs, scripts, logger, lifecycle, lease, claims, requests, reaper, lostClaims,
      recordUsage: (token) => lease.executor.recordUsage(token),
    });
  }

  /**
   * Starts a worker. Throws UsageError for bad options or a name held by a
   * live worker, ConnectionError when Redis cannot be reached.
   */
  static async start(input: WorkerOptions = {}): Promise<FitqWorker> {
    const worker = new FitqWorker(await openWorker(input));
    await worker.listen();
    return worker;
  }

  /** Subscribes to wake-ups and starts the heartbeat and the safety-net poll. */
  private async listen(): Promise<void> {
    // Its devices' first reading lands before any claim: until then they take no run.
    await this.gpuWatch?.start();
    // Redis back (perhaps a replica that lost claims of this worker's runs): a heartbeat settles them at once.
    this.unwatchConnection = watchConnection(this.redis, this.logger, () => void this.heartbeat.beat());
    this.subscriber = await subscribeEvents(this.redis, this.keys.events, this.name, {
      wake: () => {
        this.metrics?.metrics.woken();
        this.claims.wake();
      },
      dependents: () => void this.reconciler.reconcile().then(() => this.claims.wake()),
      holdsMoved: () => this.claims.holdsMoved(),
      // Hints only: what Redis records decides (a PUBLISH alone is no request).
      cancel: (runId) => void this.requests.cancelOnEvent(runId),
      stop: () => void this.requests.stopOnEvent(),
      notify: () => void this.notifier.refreshDefault(),
      outbox: () => void this.notifier.drainOutbox(),
    });
    this.heartbeat.start();
    this.poll = setInterval(() => {
      void this.eviction.check();
      void this.reconciler.reconcile();
      void this.notifier.refreshDefault().then(() => this.notifier.drainOutbox());
      this.claims.wake();
    }, this.options.pollIntervalMs);
    void this.heartbeat.beat();
    void this.reconciler.reconcile();
    // Runs that ended while no worker was live may be waiting in the outbox.
    void this.notifier.refreshDefault().then(() => this.notifier.drainOutbox());
    this.claims.wake();
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
    const interrupts = this.lifecycle.interrupted();
    const runs = this.lease.executor.size;
    const plural = runs === 1 ? 'run' : 'runs';
    if (interrupts > 1) {
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
    if (options.now) this.lease.executor.abandonAll({ cause: 'worker-stop', reason: stoppedReason(this.name, options.why) });
    return this.lifecycle.stop(options.now ? 'now' : 'graceful', () => {
      this.logger.info(`Stopping worker ${this.name}`);
      return this.release();
    });
  }

  /** The stop sequence: what is under way lands, runs end, then the lease and the connections go. */
  private async release(): Promise<void> {
    const { lease, lifecycle } = this;
    // A claim in flight may still hand this worker a run: let it land first.
    await Promise.race([Promise.allSettled([this.claims.current, lease.reregistering]), lifecycle.givenUp]);
    // Claiming nothing more, it must not keep its blocked head from other workers.
    await within(this.scripts.dropHold(this.name, lease.token).catch(() => {}), GIVE_UP_AFTER_GRACE_MS);
    // Keep the heartbeat going while runs finish, or they would be reaped as lost.
    const idle = await Promise.race([lease.executor.whenIdle().then(() => true), lifecycle.givenUp.then(() => false)]);
    // Runs that did not exit even when killed keep their capacity: it goes when the lease lapses, not before.
    const survivors = idle ? 0 : await this.killLeftovers();
    lifecycle.released();
    this.unwatchConnection?.();
    this.eviction.close();
    this.heartbeat.close();
    this.gpuWatch?.close();
    this.usage.close();
    clearInterval(this.poll);
    this.claims.close();
    this.reaper.close();
    if (survivors === 0) await within(this.scripts.deregisterWorker(this.name, lease.token).catch(() => {}), GIVE_UP_AFTER_GRACE_MS);
    // Notifications on their way get a short while, never more.
    await within(this.notifier.close(), NOTIFY_SHUTDOWN_MS + 1000);
    await this.metrics?.server.close();
    this.subscriber?.close();
    await within(closeRedis(this.redis), 1000);
    this.redis.disconnect();
    this.logger.info(`Worker ${this.name} stopped`);
    this.resolveDone();
  }

  /**
   * Given up on Redis: deregistering gives the runs' capacity back, so
   * nothing of them may still run then. Returns how many runs had still not
   * exited a second after SIGKILL (e.g. stuck in uninterruptible sleep).
   */
  private async killLeftovers(): Promise<number> {
    const executor = this.lease.executor;
    const pending = executor.size;
    const { killed, survivors } = await executor.killAll(1000);
    if (killed > 0) this.logger.error(`Killed ${killed} run(s) still running after the grace period (SIGKILL)`);
    if (survivors > 0) {
      this.logger.error(`${survivors} run(s) had not exited a second after SIGKILL: their capacity is released when this worker's lease runs out`);
    }
    // The others ended (or never started) but their end is still on its way to Redis.
    const unrecorded = pending - killed;
    if (unrecorded > 0) {
      this.logger.error(
        `Could not record the end of ${unrecorded} run(s) (is Redis reachable?); they end lost, or are re-staged per their retries, when the lease runs out`,
      );
    }
    return survivors;
  }

  /** Runs being executed now. */
  get activeRuns(): string[] {
    return this.lease.executor.runIds();
  }
}

/** Starts a worker; see FitqWorker.start. */
export function startWorker(options: WorkerOptions = {}): Promise<FitqWorker> {
  return FitqWorker.start(options);
}
