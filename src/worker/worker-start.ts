/**
 * A worker's start, before it listens: its options checked and its devices
 * found, its metrics served, Redis connected (refused if it may evict keys),
 * its capacity registered under its name, and what it has said in its log.
 */
import type { RedisConnection } from '../redis/connection.js';
import type { Logger } from 'pino';
import { resolveNamespace } from '../client.js';
import type { MetricsServer } from '../metrics/metrics-server.js';
import type { WorkerMetrics } from '../metrics/worker-metrics.js';
import { DEFAULT_LOG_MAX_LINES } from '../model/logs.js';
import { namespaceKeys, type NamespaceKeys } from '../queue/keys.js';
import { refusalOf } from '../queue/script-codes.js';
import { Scripts } from '../queue/scripts.js';
import type { WorkerRegistration } from '../queue/worker-calls.js';
import { connectRedis, redactRedisUrl, resolveRedisUrl } from '../redis/connection.js';
import { closeRedis } from '../redis/open-connections.js';
import { formatHumanAmount, MICROS_PER_UNIT } from '../resources/amount.js';
import { formatHumanResources, sortResources } from '../resources/spec.js';
import { resolveGpus } from './gpus.js';
import { totalGpuMemory } from './gpu-watch.js';
import { UsageError } from '../errors.js';
import { toolFound } from '../gpu/probe.js';
import { deviceName } from '../gpu/gpu-devices.js';
import { createLogger } from './logger.js';
import { resolveWorkerOptions, type ResolvedWorkerOptions, type WorkerOptions } from './options.js';
import { registrationFor } from './registration.js';
import type { WorkerConnection } from './run-env.js';
import { keeperSupport } from './subreaper.js';
import { closeCgroupLayout, type CgroupLayout } from './usage/cgroup-host.js';
import { enforcementText, openEnforcement } from './usage/enforce-option.js';

/** What a started worker is made of. */
export interface WorkerParts {
  options: ResolvedWorkerOptions;
  keys: NamespaceKeys;
  redis: RedisConnection;
  scripts: Scripts;
  logger: Logger;
  logMaxLines: number;
  registration: WorkerRegistration;
  /** The connection settings runs get with --pass-redis-env. */
  connection: WorkerConnection;
  /** The namespace's name. */
  queue: string;
  /** With --metrics-port: its metrics and the server showing them. */
  metrics?: { metrics: WorkerMetrics; server: MetricsServer } | undefined;
  /** The Redis URL as messages show it (no password). */
  shownUrl: string;
  /** With --enforce: the worker's cgroups, its runs' go below. */
  cgroups?: CgroupLayout | undefined;
}

/**
 * Opens a worker: throws UsageError for bad options or a name held by a
 * live worker, ConnectionError when Redis cannot be reached (and closes
 * what it opened).
 */
export async function openWorker(input: WorkerOptions): Promise<WorkerParts> {
  resolveWorkerOptions(input); // validate before looking for devices
  const gpus = await resolveGpus(input.gpus);
  const resolved = {
    ...resolveWorkerOptions(input, gpus.devices),
    gpuVendor: gpus.vendor ?? 'nvidia',
    ...(gpus.details ? { gpuDevices: gpus.details } : {}),
  };
  // Devices on a box without their vendor's tool (nvidia-smi, amd-smi) cannot be probed: fitq's bookkeeping is all there is.
  const unprobed = resolved.gpuProbe.intervalMs > 0 && !(await toolFound(resolved.gpuVendor === 'amd' ? 'amd-smi' : 'nvidia-smi'));
  const options = unprobed ? { ...resolved, gpuProbe: { ...resolved.gpuProbe, intervalMs: 0 } } : await withGpuMemory(resolved);
  const { queue, prefix } = resolveNamespace(input);
  const keys = namespaceKeys(queue, prefix);
  const logger = (input.logger ?? createLogger(options.logFormat)).child({ worker: options.name });
  const logMaxLines = input.logMaxLines ?? DEFAULT_LOG_MAX_LINES;
  // Named as BullMQ names its workers' connections: Queue.getWorkers() and Bull Board list fitq's.
  const connectionName = keys.queue.workerClientName(options.name);
  // Made first, as the metrics port is taken: a worker that cannot hold its runs to their demands does not start.
  const cgroups = openEnforcement(options.enforce);
  const undo = async () => {
    await metrics?.server.close();
    if (cgroups) closeCgroupLayout(cgroups);
  };
  // Served first: a port in use is refused before the worker registers.
  const metrics = await startMetrics(options, queue).catch(async (error: unknown) => {
    if (cgroups) closeCgroupLayout(cgroups);
    throw error;
  });
  // A Redis that may evict keys would lose runs and reservations: refused.
  const redis = await connectRedis({ ...input, redisOptions: { ...input.redisOptions, connectionName }, evictionCheck: 'refuse' }, true).catch(
    async (error: unknown) => {
      await undo();
      throw error;
    },
  );
  const scripts = new Scripts(redis, keys, logMaxLines);
  const registration = registrationFor(options);
  logger.info(`Starting worker ${options.name}: ${options.concurrencyText}`);
  const registered = await scripts.registerWorker(registration).catch(async (error: unknown) => {
    await closeRedis(redis);
    await undo();
    throw error;
  });
  if (!registered) {
    await closeRedis(redis);
    await undo();
    throw refusalOf('workerNameTaken', options.name);
  }
  if (metrics) logger.info({ metricsUrl: metrics.server.url }, `Metrics at ${metrics.server.url}`);
  if (options.passRedisEnv) logger.info('Runs get this worker\'s Redis connection settings (--pass-redis-env), password included');
  const keeper = options.reapEscaped ? keeperSupport() : undefined;
  if (keeper && !keeper.ok) logger.warn(`--reap-escaped: processes a run moves out of its session (setsid) may outlive it: killing them ${keeper.why}`);
  if (cgroups) logger.info(enforcementText(options.enforce, cgroups));
  if (gpus.whyNone) logger.warn(`--gpus auto found no GPU devices: ${gpus.whyNone}`);
  if (gpus.unreachable) logger.warn(`--gpus auto: nvidia-smi cannot reach some devices, which this worker goes without until it restarts: ${gpus.unreachable}`);
  logger.info(`Worker resources: ${formatHumanResources(options.resources) || '(none)'}`);
  if (options.devices.length > 0) logger.info(`GPU devices: ${options.devices.join(',')}${probeText(options, unprobed)}`);
  for (const device of options.gpuDevices.filter((candidate) => candidate.mig)) logger.info(`${deviceName(device)}: runs get CUDA_VISIBLE_DEVICES=${device.uuid}`);
  for (const [name, amount] of options.resources) {
    const source = input.resourceSources?.get(name);
    if (source) logger.debug(`Resource ${name}=${formatHumanAmount(amount)} from ${source}`);
  }
  const connection = { redisUrl: input.redisUrl, tlsFiles: input.redisTlsFiles };
  const shownUrl = redactRedisUrl(resolveRedisUrl(input.redisUrl));
  return { options, keys, redis, scripts, logger, logMaxLines, registration, connection, queue, metrics, shownUrl, cgroups };
}

/**
 * A worker that probes its devices has `gpumem`, their memory all told (a
 * run's gpumem is memory on each device it gets, which its claim checks
 * device by device): measured, never declared.
 */
async function withGpuMemory(options: ResolvedWorkerOptions): Promise<ResolvedWorkerOptions> {
  if (options.gpuProbe.intervalMs === 0) return options;
  if (options.resources.has('gpumem')) {
    throw new UsageError('gpumem is measured on each GPU device by nvidia-smi: do not declare it (or start the worker with --gpu-probe-interval 0)');
  }
  const total = await totalGpuMemory(options.gpuDevices, options.gpuVendor);
  if (total === undefined) return options;
  return { ...options, resources: sortResources(new Map([...options.resources, ['gpumem', total * MICROS_PER_UNIT]])) };
}

/** How the worker's devices are watched, for its log. */
function probeText(options: ResolvedWorkerOptions, unprobed: boolean): string {
  const amd = options.gpuVendor === 'amd' ? 'AMD, runs get ROCR_VISIBLE_DEVICES; ' : '';
  const tool = options.gpuVendor === 'amd' ? 'amd-smi' : 'nvidia-smi';
  if (unprobed) return ` (${amd}not probed: ${tool} not found on PATH; a device is free when fitq's own runs leave it)`;
  const { intervalMs, foreign } = options.gpuProbe;
  if (intervalMs === 0) return ` (${amd}not probed: --gpu-probe-interval 0; a device is free when fitq's own runs leave it)`;
  const trust = foreign === 'ignore' ? '; processes fitq did not start are ignored (--gpu-foreign ignore)' : '';
  return ` (${amd}probed every ${intervalMs / 1000} s through ${tool}${trust})`;
}

/** With --metrics-port, the worker's metrics and their server (loaded only then). */
async function startMetrics(options: ResolvedWorkerOptions, queue: string): Promise<WorkerParts['metrics']> {
  if (!options.metrics) return undefined;
  const [{ WorkerMetrics }, { serveMetrics }] = await Promise.all([import('../metrics/worker-metrics.js'), import('../metrics/metrics-server.js')]);
  const metrics = new WorkerMetrics({ queue, worker: options.name });
  return { metrics, server: await serveMetrics(metrics.registry, options.metrics.host, options.metrics.port) };
}
