/**
 * Worker options, validated once at the edge.
 */
import { parseEnforce } from './usage/enforce-option.js';
import type { Enforced } from './usage/cgroup-host.js';
import type { ReplicaWait } from '../redis/replica-wait.js';
import { availableParallelism, hostname } from 'node:os';
import type { Logger } from 'pino';
import { UsageError } from '../errors.js';
import { HIGHEST_PORT } from '../units/port.js';
import type { ClientOptions } from '../client.js';
import type { ClaimLimits, ClaimPolicy, GpuPlacement } from '../queue/claim-reply.js';
import { formatTimeLimit, MAX_TIME_LIMIT_MS } from '../units/duration.js';
import type { TlsFiles } from '../redis/tls-options.js';
import type { GpuOption, GpuVendor } from './gpus.js';
import { resolveGpuProbe, type GpuProbeFlags, type GpuProbeOptions } from './gpu-probe-options.js';
import { durationMs } from './duration-option.js';
import type { GpuDevice } from '../gpu/gpu-devices.js';
import { validateWorkerName } from '../model/names.js';
import { secretKey } from '../security/secret.js';
import { sortResources, toResources, type ResourceInput, type Resources } from '../resources/spec.js';
import type { LogFormat } from './logger.js';
import { resolveNotifyTargets, type NotifyTargets } from './notify-allow.js';
import { resolveNotifyBounds, type NotifyBounds } from './notify-bounds.js';

export interface WorkerOptions extends ClientOptions, GpuProbeFlags {
  /** Capacity: specs like `"gpu=2 mem=64G"`, or a map of name to amount in millionths. */
  resources?: ResourceInput;
  /**
   * GPU devices to assign runs to: `auto` (nvidia-smi), `none` (default), or
   * indices like `"0,1"`. The worker then has capacity `gpu=<count>`, and each
   * run demanding `gpu` gets devices in CUDA_VISIBLE_DEVICES.
   */
  gpus?: GpuOption;
  /** Where each resource's value came from (flag, variable, file), logged at debug level. */
  resourceSources?: ReadonlyMap<string, string>;
  /** Unique among live workers; default `<hostname>-<pid>`. */
  name?: string;
  /**
   * Most runs at once; 0 = no limit. Default: with declared capacity
   * (resources or GPU devices) no limit, as the capacity limits the runs,
   * except for runs that demand nothing: at most the number of CPU cores of
   * those; without, the number of CPU cores.
   */
  concurrency?: number;
  /** Run what fits, wait for those runs, exit when no staged run fits the total capacity. */
  runOnce?: boolean;
  /**
   * `backfill` (default): start any run that fits, except that the first run
   * in order that does not fit yet holds what it needs (no starvation).
   * `fifo`: strict order, the first run that fits the total capacity blocks the rest.
   */
  policy?: ClaimPolicy;
  /**
   * Where a fractional gpu run goes on the worker's devices: `pack` (default)
   * onto the fullest device that fits, keeping whole devices free for
   * whole-device runs; `spread` onto the emptiest (ties: lowest index).
   */
  gpuPlacement?: GpuPlacement;
  /** Lease length in ms; a worker silent this long is dead. Default 30,000. */
  leaseMs?: number;
  /** Delay between SIGTERM and SIGKILL when runs are stopped. Default 10,000. */
  killGraceMs?: number;
  /** Time limit (ms) of runs staged without one. Default: none (the maximum, if set). */
  defaultTimeLimitMs?: number;
  /** Never claim runs with a longer time limit (ms); runs staged without one get the default, else this. */
  maxTimeLimitMs?: number;
  /** Safety-net claim poll; wake-ups are event driven. Default 5,000. */
  pollIntervalMs?: number;
  logFormat?: LogFormat;
  /** A logger to use instead of one made from logFormat. */
  logger?: Logger;
  /** Echo run output to the worker's stdout. Default true. */
  echoOutput?: boolean;
  /**
   * Pass the worker's Redis connection settings on to its runs: FITQ_REDIS_URL
   * (the URL it uses, password included), REDIS_URL, and FITQ_REDIS_CA,
   * FITQ_REDIS_CERT and FITQ_REDIS_KEY. Default false: runs get none of them.
   * The signing secret (FITQ_SECRET, FITQ_SECRET_FILE) is never passed on.
   */
  passRedisEnv?: boolean;
  /** Run only runs signed by their user's registered key (security/user-keys.ts); others end rejected. Default false. */
  requireSigned?: boolean;
  /**
   * Start each run under a keeper that kills, when the run's main process
   * exits, whatever it moved out of its process group (setsid daemons) too;
   * Linux with Perl (see subreaper.ts). Off by default: the keeper costs
   * about as much CPU per run as the run's own spawn.
   */
  reapEscaped?: boolean;
  /**
   * Hold each run to these demands of its own in a cgroup (`mem`: its memory
   * limit, `cpu`: its CPU quota), and measure it there (see usage/). The
   * worker does not start where it cannot make cgroups. Default: none (what
   * runs use is sampled from /proc).
   */
  enforce?: string | readonly string[];
  /** With passRedisEnv: the TLS files the worker's connection uses (e.g. its flags), passed on over its environment's. */
  redisTlsFiles?: TlsFiles;
  /** Serve the worker's own metrics (claims, wake-ups) at http://metricsHost:metricsPort/metrics; 0 picks a free port. Default: none. */
  metricsPort?: number;
  /** Address the metrics server binds. Default 127.0.0.1. */
  metricsHost?: string;
  /**
   * Send notifications only to URLs under these (scheme, host, port and path;
   * see notify-allow.ts). Default: any http(s) URL, but none on a worker with
   * a secret (notification URLs are not signed).
   */
  notifyAllow?: readonly string[];
  /** Bounds on notifications on their way (see notifier.ts); the defaults suit any worker. */
  notifyBounds?: Partial<NotifyBounds>;
  /**
   * Replicas that must confirm a claim before its run starts, and its end
   * once recorded (`--redis-wait-replicas`, see redis/replica-wait.ts).
   * Default: none (a failover may lose a claim or an end; see
   * docs/high-availability.md).
   */
  waitReplicas?: ReplicaWait | undefined;
}

export interface ResolvedWorkerOptions {
  resources: Resources;
  /** GPU device indices; empty without devices. */
  devices: readonly number[];
  policy: ClaimPolicy;
  gpuPlacement: GpuPlacement;
  name: string;
  /** Most runs at once (0 = no limit). */
  concurrency: number;
  /** Most runs at once that demand nothing (0 = no limit): with declared capacity and no --concurrency, the CPU cores. */
  bareConcurrency: number;
  /** The worker's first log line says it: "at most 2 runs at once (the CPU cores; --concurrency to change)". */
  concurrencyText: string;
  runOnce: boolean;
  leaseMs: number;
  killGraceMs: number;
  /** The worker's time limits (ms): see WorkerOptions. */
  timeLimits: ClaimLimits;
  pollIntervalMs: number;
  logFormat: LogFormat;
  echoOutput: boolean;
  passRedisEnv: boolean;
  reapEscaped: boolean;
  /** The demands its runs are held to in cgroups (--enforce). */
  enforce: ReadonlySet<Enforced>;
  /** With a secret, runs must be signed with it (see src/security/signing.ts); without, every run runs. */
  secret: Buffer | undefined;
  /** Runs must be signed by their user's registered key (--require-signed, security/user-keys.ts). */
  requireSigned: boolean;
  /** Where to serve the worker's metrics, if anywhere. */
  metrics: { host: string; port: number } | undefined;
  /** Where its notifications may go, and how many it holds. */
  notify: { targets: NotifyTargets; bounds: NotifyBounds };
  waitReplicas: ReplicaWait | undefined;
  /** How its GPU devices are probed; its interval is 0 without devices or without nvidia-smi (worker-start.ts). */
  gpuProbe: GpuProbeOptions;
  /** Whose devices it has (`--gpus auto` found AMD ones, or not): which variable names them for a run. */
  gpuVendor: GpuVendor;
  /** Each of `devices` as nvidia-smi lists it (MIG devices, UUIDs); a list given by hand: each a whole GPU of that index. */
  gpuDevices: readonly GpuDevice[];
}

function resolveMetrics(options: WorkerOptions): ResolvedWorkerOptions['metrics'] {
  const { metricsPort: port, metricsHost: host } = options;
  if (port === undefined) {
    if (host !== undefined) throw new UsageError(`--metrics-host '${host}' goes with --metrics-port`);
    return undefined;
  }
  if (!Number.isInteger(port) || port < 0 || port > HIGHEST_PORT) {
    throw new UsageError(`expected --metrics-port to be a port number from 0 to ${HIGHEST_PORT}, got '${port}'`);
  }
  if (host !== undefined && host.trim() === '') throw new UsageError(`expected --metrics-host to be an address, got '${host}'`);
  return { host: host ?? '127.0.0.1', port };
}

function nonNegativeInteger(flag: string, value: number): number {
  if (!Number.isInteger(value) || value < 0) {
    throw new UsageError(`expected ${flag} to be a non-negative integer, got '${value}'`);
  }
  return value;
}

/** A worker's time limit in ms: up to 365 days. */
function timeLimitMs(flag: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_TIME_LIMIT_MS) {
    throw new UsageError(`expected ${flag} to be a whole number of ms up to 365 days, got '${value}'`);
  }
  return value;
}

function resolveTimeLimits(options: WorkerOptions): ClaimLimits {
  const defaultMs = timeLimitMs('--default-time-limit', options.defaultTimeLimitMs);
  const maxMs = timeLimitMs('--max-time-limit', options.maxTimeLimitMs);
  if (defaultMs !== undefined && maxMs !== undefined && defaultMs > maxMs) {
    throw new UsageError(
      `--default-time-limit '${formatTimeLimit(defaultMs)}' is above --max-time-limit '${formatTimeLimit(maxMs)}': runs staged without a limit could never run here`,
    );
  }
  return { defaultMs, maxMs };
}

/**
 * How many runs at once. Declared capacity (resources, GPU devices) limits
 * the runs that demand it, so a count limit by CPU cores would leave it
 * idle (`-r cpu=8` on 2 cores): then only runs that demand nothing are
 * bounded, by the cores. Without capacity, every run is, by the cores.
 * `--concurrency` bounds every run.
 */
function resolveConcurrency(
  given: number | undefined,
  declared: boolean,
): Pick<ResolvedWorkerOptions, 'concurrency' | 'bareConcurrency' | 'concurrencyText'> {
  const runs = (count: number) => `${count} run${count === 1 ? '' : 's'}`;
  if (given !== undefined) {
    const concurrency = nonNegativeInteger('--concurrency', given);
    const text = concurrency === 0 ? 'no limit on runs at once (--concurrency 0)' : `at most ${runs(concurrency)} at once (--concurrency)`;
    return { concurrency, bareConcurrency: 0, concurrencyText: text };
  }
  const cores = availableParallelism();
  if (declared) {
    return {
      concurrency: 0,
      bareConcurrency: cores,
      concurrencyText: `as many runs at once as its capacity fits, and of runs that demand nothing at most ${cores} (the CPU cores; --concurrency to change)`,
    };
  }
  return { concurrency: cores, bareConcurrency: 0, concurrencyText: `at most ${runs(cores)} at once (the CPU cores; --concurrency to change)` };
}

/** Validates options; `devices` are the resolved GPU devices (see gpus.ts). */
export function resolveWorkerOptions(options: WorkerOptions, devices: readonly number[] = []): ResolvedWorkerOptions {
  const declared = toResources(options.resources);
  const resources = new Map(declared);
  if (devices.length > 0) {
    const count = BigInt(devices.length) * 1_000_000n;
    const given = declared.get('gpu');
    if (given !== undefined && given !== count) {
      throw new UsageError(`--gpus lists ${devices.length} devices but the resources say gpu=${Number(given) / 1e6}: give one or the other`);
    }
    resources.set('gpu', count);
  }
  const name = validateWorkerName(options.name ?? `${hostname()}-${process.pid}`);
  const logFormat = options.logFormat ?? 'pretty';
  if (logFormat !== 'pretty' && logFormat !== 'json') {
    throw new UsageError(`expected --log-format to be pretty or json, got '${String(logFormat)}'`);
  }
  const policy = options.policy ?? 'backfill';
  if (policy !== 'backfill' && policy !== 'fifo') {
    throw new UsageError(`expected --policy to be backfill or fifo, got '${String(policy)}'`);
  }
  const gpuPlacement = options.gpuPlacement ?? 'pack';
  if (gpuPlacement !== 'pack' && gpuPlacement !== 'spread') {
    throw new UsageError(`expected --gpu-placement to be pack or spread, got '${String(gpuPlacement)}'`);
  }
  const secret = secretKey(options.secret);
  return {
    resources: sortResources(resources),
    devices,
    policy,
    gpuPlacement,
    name,
    ...resolveConcurrency(options.concurrency, resources.size > 0),
    runOnce: options.runOnce ?? false,
    leaseMs: durationMs('--lease', options.leaseMs ?? 30_000, 300),
    killGraceMs: durationMs('--kill-grace', options.killGraceMs ?? 10_000, 0),
    timeLimits: resolveTimeLimits(options),
    pollIntervalMs: durationMs('pollIntervalMs', options.pollIntervalMs ?? 5_000, 50),
    logFormat,
    echoOutput: options.echoOutput ?? true,
    passRedisEnv: options.passRedisEnv ?? false,
    reapEscaped: options.reapEscaped ?? false,
    enforce: parseEnforce(options.enforce),
    secret,
    requireSigned: options.requireSigned ?? false,
    metrics: resolveMetrics(options),
    notify: { targets: resolveNotifyTargets(options.notifyAllow, secret !== undefined), bounds: resolveNotifyBounds(options.notifyBounds) },
    waitReplicas: options.waitReplicas,
    gpuProbe: resolveGpuProbe(options, devices),
    gpuVendor: 'nvidia',
    gpuDevices: devices.map((id) => ({ id, gpu: id, uuid: '' })),
  };
}
